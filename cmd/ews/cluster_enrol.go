package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/node/enrolment"
	"github.com/ews-firmware/ews/node/firstrun"
)

// clusterEnrol is `ews cluster enrol NAME --url URL`: it mints board NAME's
// bundle from the admin bundle here, seals it under a fresh one-time code
// and leaves the sealed bundle with the board at --url (POST
// /api/cluster/enrol, admin); the new board's first-run page takes the
// code and that URL, fetches the bundle once and opens it (internal/enrol).
// The code is printed, never sent.
func clusterEnrol(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster enrol", "NAME [--addr HOST]... [--bundle ADMIN] --url URL [--cacert ca.pem] [--token-file F] [--ttl D]",
		"Add board NAME to a running cluster with a one-time enrolment code: its bundle is minted here, sealed under the code and left with the board at --url; on the new board's first-run page, enter the code and that URL.", stderr)
	var addrs listFlag
	fs.Var(&addrs, "addr", "an address (or DNS name) the new board is reached at, a SAN of its certificate; repeat")
	af := addAdminFlags(fs, "the admin bundle (its CA key mints the board's certificate", "a running board's HTTP address: the new board fetches its bundle there")
	ttl := fs.Duration("ttl", enrolment.DefaultTTL, "how long the board keeps the sealed bundle (at most 24h)")
	timeout := fs.Duration("timeout", 15*time.Second, "give up after this long")
	if code, ok := af.parse(fs, args, 1, "ews cluster enrol: want NAME, --bundle ADMIN and --url URL", stderr); !ok {
		return code
	}
	if *ttl <= 0 || *ttl > enrolment.MaxTTL {
		fmt.Fprintf(stderr, "ews cluster enrol: --ttl %s: want more than 0 and at most %s\n", *ttl, enrolment.MaxTTL)
		return exitUsage
	}
	a, base, token, c, code := af.client("cluster enrol", *timeout, stderr)
	if code != exitOK {
		return code
	}
	b, err := a.Board(fs.Arg(0), addrs, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster enrol: %v\n", err)
		return exitError
	}
	text, err := b.Marshal()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster enrol: %v\n", err)
		return exitError
	}
	secret, err := enrol.NewCode()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster enrol: %v\n", err)
		return exitError
	}
	id, sealed, err := enrol.Seal(secret, text)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster enrol: %v\n", err)
		return exitError
	}
	out, code := adminPost(c, "cluster enrol", base, enrolment.Path, token, enrolment.Request{ID: id, Sealed: sealed, TTL: int(ttl.Seconds()), Name: b.Name}, http.StatusCreated, stderr)
	if code != exitOK {
		return code
	}
	var ans enrolment.Answer
	_ = json.Unmarshal(out, &ans)
	fmt.Fprintf(stdout, "enrolment code for %s: %s\n", b.Name, enrol.Show(secret))
	fmt.Fprintf(stdout, "On %s's first-run page, choose \"Join with an enrolment code\" and enter the code and %s.\n", b.Name, base)
	fmt.Fprintf(stdout, "%s keeps the sealed bundle until %s or until it is fetched, once; the code opens it and is shown only here.\n", base, ans.Expires.Local().Format(time.RFC3339))
	host := b.Name + ".local"
	if len(addrs) > 0 {
		host = addrs[0]
	}
	link := firstrun.EnrolLink(host, secret, base)
	// No QR code drawn here: an encoder costs the board binary 131 KB (armv6),
	// past its ceiling (docs/NOTES.md); `qrencode -t ansiutf8 LINK` draws one.
	fmt.Fprintf(stdout, "On a phone or computer near %s, this link opens its first-run page with the form filled (the claim code still to type):\n%s\n", b.Name, link)
	return exitOK
}
