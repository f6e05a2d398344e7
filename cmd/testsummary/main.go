// Command testsummary reads `go test -json` and prints what a person needs: go test's own lines, then the failures, the slowest tests, or the flakes of many runs.
//
//	go test -json ./... | go run ./cmd/testsummary            # go test's output, failures summarised at the end
//	go test -json ./... | go run ./cmd/testsummary -plain     # go test's output only
//	go run ./cmd/testsummary run.json                          # the failures of a saved run only
//	go run ./cmd/testsummary -slowest 20 run.json              # the 20 slowest tests as a Markdown table
//	go run ./cmd/testsummary -flakes run1.json run2.json ...   # each test that failed, how often, and its shuffle seeds
//
// Without -slowest or -flakes it echoes what `go test` without -json would
// print (ok/FAIL lines, the output of failing tests), then, when anything
// failed, a summary at the end: each failing test and the last lines of
// its output. It exits 1 when a test or a build failed.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	fs := flag.NewFlagSet("testsummary", flag.ExitOnError)
	slowest := fs.Int("slowest", 0, "print the N slowest tests of the runs as a Markdown table")
	flakes := fs.Bool("flakes", false, "each file is one run: print each test that failed, in how many runs, and the shuffle seeds")
	tail := fs.Int("tail", 15, "lines of each failing test's output in the summary")
	plain := fs.Bool("plain", false, "only echo go test's plain output (exit 1 on a failure), no summary")
	_ = fs.Parse(os.Args[1:])
	echo := fs.NArg() == 0 && *slowest == 0 && !*flakes // a stream is echoed, saved runs are not
	runs, err := readRuns(fs.Args(), os.Stdin, echo, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	switch {
	case *flakes:
		printFlakes(os.Stdout, runs)
	case *slowest > 0:
		printSlowest(os.Stdout, runs, *slowest)
	case *plain:
		for _, r := range runs {
			if len(r.failed()) > 0 {
				os.Exit(1)
			}
		}
	default:
		if failed := printFailures(os.Stdout, runs, *tail); failed {
			os.Exit(1)
		}
	}
}

// readRuns reads one run from each file, or from stdin when there are none;
// echo copies go test's plain output to w while reading.
func readRuns(files []string, stdin io.Reader, echo bool, w io.Writer) ([]*run, error) {
	var out io.Writer
	if echo {
		out = w
	}
	if len(files) == 0 {
		r, err := read(stdin, out)
		return []*run{r}, err
	}
	var runs []*run
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		r, err := read(f, out)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.name = name
		runs = append(runs, r)
	}
	return runs, nil
}
