package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/boardrevoke"
)

// clusterRevoke adds a board to the cluster's revoked list (POST
// /api/cluster/revoke on the board at --url, with the admin bundle's
// token): once the log commits it, every board refuses the board's
// certificate and gossip (docs/NOTES.md "Revoking a board").
func clusterRevoke(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster revoke", "NAME [--bundle ADMIN] --url URL [--cacert ca.pem] [--token-file F]",
		"Revoke board NAME (a stolen or lost card): every board refuses its certificate and gossip within seconds and shows it revoked. A side without a majority of the boards refuses (no quorum).", stderr)
	af := addAdminFlags(fs, "the admin bundle (its token, its CA, its signing key", "any other board's HTTP address")
	timeout := fs.Duration("timeout", 15*time.Second, "give up after this long")
	if code, ok := af.parse(fs, args, 1, "ews cluster revoke: want NAME, --bundle ADMIN and --url URL", stderr); !ok {
		return code
	}
	b, base, token, c, code := af.client("cluster revoke", *timeout, stderr)
	if code != exitOK {
		return code
	}
	rq := boardrevoke.Request{Name: fs.Arg(0), At: time.Now().UTC()}
	if b.SignKey != "" { // the admin's signature: what every board checks (docs/DESIGN.md, Trust)
		key, err := b.Signer()
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster revoke: %s: %v\n", *af.bundle, err)
			return exitError
		}
		rq.Sig = boardrevoke.Sign(key, boardrevoke.Entry{Board: rq.Name, At: rq.At})
	}
	out, code := adminPost(c, "cluster revoke", base, boardrevoke.Path, token, rq, http.StatusOK, stderr)
	if code != exitOK {
		return code
	}
	var e boardrevoke.Entry
	if err := json.Unmarshal(out, &e); err != nil {
		fmt.Fprintf(stderr, "ews cluster revoke: %s: %v\n", base, err)
		return exitError
	}
	fmt.Fprintf(stdout, "revoked %s (by %s at %s", e.Board, e.By, e.At.Format(time.RFC3339))
	if e.Serial != "" {
		fmt.Fprintf(stdout, ", certificate serial %s", e.Serial)
	}
	fmt.Fprintln(stdout, "): every board refuses its certificate and gossip; to bring it back, reflash it under a new name")
	return exitOK
}
