//go:build lite

package main

import "io"

// tools are left out of the lite build (docs/NOTES.md "The lite build"):
// they run from an admin's machine or a bench host with the full build,
// never on a small board; each answers that it is not here.
var tools = map[string]func(args []string, stdout, stderr io.Writer) int{}
