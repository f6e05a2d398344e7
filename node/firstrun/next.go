package firstrun

import (
	"html"
	"strings"
)

// nextBoards is the answer to Start's "how to add the next board": the
// exact command that mints each board's bundle from the admin bundle the
// page offered (AdminFile), and what to put on that board's first-run page.
func nextBoards(p plan) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<div class="box" id="next"><p><strong>Add the next board.</strong> Boot it with no boot config and open its first-run page (its claim code is in <code>` + ClaimFile + `</code> on its boot partition). On your computer, with <code>` + AdminFile + `</code> saved above, mint its bundle:</p>
<pre id="next-commands">`)
	others := p.others()
	if len(others) == 0 && p.domain == "" {
		return `<div class="box" id="next"><p><strong>This cluster's CA may certify this board only</strong> (` + e(describe(p)) + `): no other board can join it. For a cluster that grows, start over and name its boards or a DNS suffix (delete ` + "`ews.toml`" + ` and the board's bundle, restart).</p></div>` + "\n"
	}
	for _, n := range others {
		b.WriteString(e(mintCommand(p, n)) + "\n")
	}
	if p.domain != "" || len(others) == 0 {
		b.WriteString(e(mintCommand(p, "NAME")) + "\n")
	}
	b.WriteString(`</pre>
<p>On that board's page, under "Join a cluster", paste the text of its <code>NAME.board.bundle</code>`)
	if peers := p.peers(); len(peers) > 0 {
		b.WriteString(` and give the cluster's peers: <code id="next-peers">` + e(strings.Join(peers, ", ")) + `</code>`)
	} else {
		b.WriteString(`. These boards were named without addresses: to run them as one cluster, list every board as <code>NAME=HOST:7946</code>, in the same order, in each board's <code>cluster.peers</code> (the Join form's peers, and this board's <code>ews.toml</code>)`)
	}
	b.WriteString(`. The <code>ews</code> command is the same binary as the board's (<code>make build</code>, or a release).</p>
<p id="next-enrol">Or, once this board runs, without a file to carry: log in to its UI as the admin, open Cluster, "Add a board": it shows the <code>ews cluster enrol</code> command that prints a one-time code, and the new board's page takes it under "Join with an enrolment code".</p>
<p><small>The CA may certify ` + e(describe(p)) + `. A board outside that cannot be added with this cluster's CA.</small></p></div>
`)
	return b.String()
}

// mintCommand is `ews cluster board` for board name of p.
func mintCommand(p plan, name string) string {
	cmd := "ews cluster board " + name
	hosts := p.certHosts(name)
	if name == "NAME" && p.domain != "" {
		hosts = []string{"NAME." + p.domain}
	}
	for _, h := range hosts {
		cmd += " --addr " + h
	}
	return cmd + " --bundle " + AdminFile + " --out " + name + ".board.bundle"
}

// describe is what the CA may certify, in words.
func describe(p plan) string {
	s := "the boards " + strings.Join(p.boards, ", ") + " (each also as NAME.local)"
	var addrs []string
	for _, h := range p.hosts {
		if h != "" {
			addrs = append(addrs, h)
		}
	}
	if len(addrs) > 0 {
		s += ", their addresses " + strings.Join(addrs, ", ")
	}
	if p.domain != "" {
		s += ", any NAME." + p.domain
	}
	return s + ", localhost and loopback"
}
