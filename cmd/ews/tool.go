package main

import (
	"fmt"
	"io"
)

// tool is the command name's run function from this build's tools
// (tools_full.go, tools_lite.go); one the build left out says so and exits 2.
func tool(name string) func(args []string, stdout, stderr io.Writer) int {
	if run, ok := tools[name]; ok {
		return run
	}
	return func(_ []string, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "ews %s: not in the lite build of ews; run it with the full build on another machine (docs/NOTES.md \"The lite build\")\n", name)
		return exitUsage
	}
}
