// Command floor prints, beside a bench run's measured latency, the floor a perfect scheduler would reach on the same arrivals.
//
//	ews bench --url URL --rate R --duration D --mix M --seed S --json run.json
//	go run ./cmd/benchfloor --device-latency 20ms --page-latency 20ms run.json [more.json...]
//
// It replays each report's own arrival stream (its mix, seed, asked rate
// and duration) through bench.Floor's ideal queues: no slot waits, each
// device serialised, concurrent reads of a device sharing one read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

func main() {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	dev := fs.Duration("device-latency", 0, "one device operation ([sim] device_latency of the run)")
	page := fs.Duration("page-latency", 0, "one page ([sim] page_latency of the run)")
	maxAge := fs.Duration("max-age", 0, "reads answered from a reading this young (0: none)")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "floor: want one or more bench --json reports")
		os.Exit(2)
	}
	m := bench.FloorModel{DeviceLatency: *dev, PageLatency: *page, MaxAge: *maxAge}
	if err := run(os.Stdout, m, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run prints one row per class of each report: the floor beside the
// measured p50 and p99 and their ratio.
func run(w io.Writer, m bench.FloorModel, paths []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "report\tclass\trate/s\tok\tshed\tfloor p50 ms\tmeasured p50 ms\tfloor p99 ms\tmeasured p99 ms\tp99 / floor\t")
	for _, p := range paths {
		rep, err := load(p)
		if err != nil {
			return err
		}
		fl, err := bench.FloorOfReport(rep, m)
		if err != nil {
			return fmt.Errorf("floor: %s: %w", p, err)
		}
		for _, f := range fl {
			var got bench.ClassReport
			for _, c := range rep.Classes {
				if c.Name == f.Name {
					got = c
				}
			}
			if f.Name == "control" && rep.Control != nil && got.Name == "" {
				got = *rep.Control // every control class together
			}
			ratio := "-"
			if f.Latency.P99 > 0 {
				ratio = fmt.Sprintf("%.2fx", got.Latency.P99/f.Latency.P99)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t\n", p, f.Name, rep.RateAsked, got.OK, got.Shed,
				f.Latency.P50, got.Latency.P50, f.Latency.P99, got.Latency.P99, ratio)
		}
	}
	return tw.Flush()
}

func load(path string) (*bench.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("floor: %s: %w", path, err)
	}
	return &rep, nil
}
