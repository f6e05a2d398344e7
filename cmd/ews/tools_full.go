//go:build !lite

package main

import "io"

// tools are the commands run from an admin's machine or a bench host, not
// on a board: the full build has them all (the lite build none, tools_lite.go).
var tools = map[string]func(args []string, stdout, stderr io.Writer) int{
	"demo":     cmdDemo,
	"discover": cmdDiscover,
	"bench":    cmdBench,
	"cluster":  cmdCluster,
	"firmware": cmdFirmware,
	"upgrade":  cmdUpgrade,
}
