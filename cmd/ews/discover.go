package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ews-firmware/ews/node/mdns"
)

// discoverBoards browses the LAN; a variable so that tests of `ews status`
// send nothing onto the machine's network.
var discoverBoards = func(ctx context.Context, timeout time.Duration) ([]mdns.Board, error) {
	return mdns.Browse(ctx, mdns.BrowseOptions{Timeout: timeout})
}

// discovered is one line of `ews discover --json`.
type discovered struct {
	Name    string   `json:"name"`
	Address string   `json:"address"` // host:port of its first address
	URL     string   `json:"url"`
	Addrs   []string `json:"addrs"`
	Master  bool     `json:"master"`
	Role    string   `json:"role"`
	Version string   `json:"version"`
	Cluster string   `json:"cluster"`
	TLS     bool     `json:"tls"`
}

func cmdDiscover(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("discover", "[--timeout 2s] [--json]", "List the ews boards on the LAN: each announces itself over mDNS/DNS-SD (_ews._tcp, _ews-https._tcp)\nunless its config says [node] mdns = false.", stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "listen for answers this long")
	raw := fs.Bool("json", false, "print a JSON array")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ews discover: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "ews discover: --timeout %v: want a positive duration such as 2s\n", *timeout)
		return exitUsage
	}
	boards, err := discoverBoards(context.Background(), *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "ews discover: %v\n", err)
		return exitError
	}
	rows := make([]discovered, 0, len(boards))
	for _, b := range boards {
		d := discovered{Name: b.Name, URL: b.URL(), Master: b.Role == "master", Role: b.Role, Version: b.Version, Cluster: b.Cluster, TLS: b.TLS}
		d.Address = strings.TrimPrefix(strings.TrimPrefix(d.URL, "https://"), "http://")
		for _, a := range b.Addrs {
			d.Addrs = append(d.Addrs, a.String())
		}
		rows = append(rows, d)
	}
	if *raw {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
	} else if len(rows) > 0 {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tADDRESS\tROLE\tVERSION\tCLUSTER\tURL")
		for _, d := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, orDash(d.Address), orDash(d.Role), orDash(d.Version), orDash(d.Cluster), orDash(d.URL))
		}
		_ = tw.Flush()
	}
	if len(rows) == 0 {
		fmt.Fprintf(stderr, "ews discover: no board answered within %v (a board announces unless [node] mdns = false, and not when it listens on loopback only; multicast must reach this host)\n", *timeout)
		return exitError
	}
	return exitOK
}
