package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// clusterRaft prints the durable log as one board sees it (GET
// /api/cluster/raft): its state, the leader, the voters and non-voters,
// the last index and the version of each document.
func clusterRaft(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster raft", "--url URL [--json] [--cacert ca.pem] [--bundle ADMIN | --token-file F]",
		"Print the cluster's durable log (users, configuration, revocations) as the board at URL sees it: leader, voters, last index.", stderr)
	url := fs.String("url", "", "any board's HTTP address")
	raw := fs.Bool("json", false, "print the /api/cluster/raft JSON as is")
	cf := addCredFlags(fs, "a bundle: its CA for a board with TLS on (and an admin bundle's token, for a board with [http] read_auth)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *url == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews cluster raft: want --url URL and no argument")
		return exitUsage
	}
	base := boardURL(*url)
	cr, code := cf.load("cluster raft", *timeout, false, stderr)
	if code != exitOK {
		return code
	}
	body, code := boardCall(cr.client, "cluster raft", http.MethodGet, base, "/api/cluster/raft", cr.token, nil, http.StatusOK, stderr)
	if code != exitOK {
		return code
	}
	if *raw {
		stdout.Write(body)
		return exitOK
	}
	var st durable.Status
	if err := json.Unmarshal(body, &st); err != nil {
		fmt.Fprintf(stderr, "ews cluster raft: %s: %v\n", base, err)
		return exitError
	}
	printRaft(stdout, st)
	return exitOK
}

func printRaft(w io.Writer, st durable.Status) {
	dash := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, " ")
	}
	var docs []string
	for k, v := range st.Documents {
		docs = append(docs, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(docs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "board\t%s\n", st.Self)
	fmt.Fprintf(tw, "state\t%s\n", st.State)
	leader := st.Leader
	if leader == "" {
		leader = "- (none: an election, or no quorum on this side)"
	}
	fmt.Fprintf(tw, "leader\t%s\n", leader)
	fmt.Fprintf(tw, "voters\t%s\n", dash(st.Voters))
	fmt.Fprintf(tw, "nonvoters\t%s\n", dash(st.Nonvoters))
	fmt.Fprintf(tw, "term\t%d\n", st.Term)
	fmt.Fprintf(tw, "last index\t%d (applied %d)\n", st.LastIndex, st.Applied)
	fmt.Fprintf(tw, "documents\t%s\n", dash(docs))
	tw.Flush()
}
