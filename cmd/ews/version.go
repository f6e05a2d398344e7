package main

import (
	"fmt"
	"io"

	"github.com/ews-firmware/ews/internal/buildinfo"
)

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", "", "Print version, commit, Go version, GOOS/GOARCH and GOARM.", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ews version: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	fmt.Fprintln(stdout, buildinfo.String())
	return exitOK
}
