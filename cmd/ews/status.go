package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// statusView is what `ews status` reads of GET /api/cluster.
type statusView struct {
	Epoch   uint64         `json:"epoch"`
	Master  string         `json:"master"`
	Version uint64         `json:"version"`
	Self    string         `json:"self"`
	Queue   map[string]int `json:"queue"`
	Nodes   []struct {
		Name     string `json:"name"`
		Rank     int    `json:"rank"`
		HTTP     string `json:"http"`
		Linknum  int    `json:"linknum"`
		Capacity int    `json:"capacity"`
		Runstate string `json:"runstate"`
		Load     struct {
			CPU float64 `json:"cpu"`
			Mem float64 `json:"mem"`
		} `json:"load"`
		LastSeenMs int64 `json:"last_seen_ms"`
	} `json:"nodes"`
}

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "[--url URL] [--json] [--config PATH] [--cacert ca.pem | --bundle BUNDLE] [--token-file F]", "Print the cluster table as seen by the board at URL (any board: each keeps the replicated table).\nWithout --url: this machine's board (its config's node.http), else 127.0.0.1:8080, else a local `ews demo` (127.0.0.1:8081..8083),\nelse a board found on the LAN over mDNS (see `ews discover`), masters first.", stderr)
	url := fs.String("url", "", "any board's HTTP address (default: a local board, see above)")
	cfgPath := fs.String("config", "", "without --url, the config whose node.http to try first (default: $EWS_CONFIG, then the search paths of `ews run`)")
	raw := fs.Bool("json", false, "print the /api/cluster JSON as is")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	cf := addCredFlags(fs, "a bundle (the admin's or a board's): its CA for a board with TLS on; without --url, --cacert and --bundle, the local config's bundle's CA is trusted when it can be read")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ews status: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	var localCA *x509.CertPool // the local config's bundle's CA, for the board found there
	if *url == "" {
		cands := localCandidates(*cfgPath)
		found, ok := findBoard(cands)
		if !ok { // then the boards that announce themselves on the LAN (status_discover.go)
			found, ok = findBoard(discoveredCandidates())
		}
		if !ok {
			fmt.Fprintf(stderr, "ews status: no board answers at %s, nor on the LAN over mDNS; pass --url http://BOARD:PORT\n", describe(cands))
			return exitUsage
		}
		fmt.Fprintf(stderr, "ews status: using %s (%s); --url picks another board\n", found.url, found.why)
		*url, localCA = found.url, found.ca
	}
	base := boardURL(*url)
	cr, code := cf.load("status", *timeout, false, stderr)
	if code != exitOK {
		return code
	}
	c := cr.client
	if cr.tls == nil && localCA != nil {
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: localCA}}
	}
	req, err := http.NewRequest(http.MethodGet, base+"/api/cluster", nil)
	if err != nil {
		fmt.Fprintf(stderr, "ews status: %v\n", err)
		return exitUsage
	}
	// no token is sent, --token-file or not: /api/cluster needs none, and
	// status often asks over plain HTTP (the flag is taken as every
	// board-facing command takes it)
	resp, err := c.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "ews status: cannot reach %s: %v%s\n", base, err, tlsHint(err))
		return exitError
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		fmt.Fprintf(stderr, "ews status: read %s: %v\n", base, err)
		return exitError
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "ews status: %s/api/cluster answered %s: %s\n", base, resp.Status, strings.TrimSpace(string(body)))
		return exitError
	}
	var v statusView
	if err := json.Unmarshal(body, &v); err != nil {
		fmt.Fprintf(stderr, "ews status: %s is not an ews board (bad /api/cluster JSON: %v)\n", base, err)
		return exitError
	}
	if *raw {
		_, _ = stdout.Write(body)
		return exitOK
	}
	printStatus(stdout, &v)
	return exitOK
}

func printStatus(w io.Writer, v *statusView) {
	fmt.Fprintf(w, "seen from %s: master %s, epoch %d, table version %d\n", v.Self, orDash(v.Master), v.Epoch, v.Version)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tNAME\tROLE\tEPOCH\tRUNSTATE\tLINKNUM\tCPU\tMEM\tLAST HEARD")
	for _, n := range v.Nodes {
		role := "board"
		if n.Name == v.Master {
			role = "master"
		}
		if n.Name == v.Self {
			role += "*"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d/%d\t%.0f%%\t%.0f%%\t%s\n", n.Rank, n.Name, role, v.Epoch,
			n.Runstate, n.Linknum, n.Capacity, n.Load.CPU*100, n.Load.Mem*100, ago(n.LastSeenMs))
	}
	_ = tw.Flush()
	if len(v.Queue) > 0 {
		parts := make([]string, 0, len(v.Queue))
		for k, d := range v.Queue {
			parts = append(parts, fmt.Sprintf("%s=%d", k, d))
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "queue: %s\n", strings.Join(parts, " "))
	}
}

func ago(ms int64) string {
	if ms <= 0 {
		return "now"
	}
	return (time.Duration(ms) * time.Millisecond).String() + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
