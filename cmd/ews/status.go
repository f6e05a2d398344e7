package main

import (
	"fmt"
	"io"
)

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "[--url URL] [--json]", "Print the cluster table as seen by the node at URL.", stderr)
	fs.String("url", "http://127.0.0.1:8080", "any board's HTTP address")
	fs.Bool("json", false, "print the raw /api/cluster JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintln(stderr, "ews status: not yet built")
	return exitError
}

func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench", "--url URL --rate R --duration D --mix SPEC", "Open-loop load generator.", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintln(stderr, "ews bench: not yet built")
	return exitError
}
