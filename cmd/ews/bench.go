package main

import (
	"fmt"
	"io"
	"sort"
)

func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench", "--url URL --rate R --duration D --mix SPEC", "Open-loop load generator.", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintln(stderr, "ews bench: not yet built")
	return exitError
}

func sortStrings(s []string) { sort.Strings(s) }
