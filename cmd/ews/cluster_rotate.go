package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/rotate"
)

// clusterRotate rolls a new gossip key and session secret through the
// running boards (docs/NOTES.md "Security", "Rotating the cluster's
// secrets"): it makes them, stages the admin bundle that holds them (a
// temp file beside it, read back and checked), commits them through the
// board at --url (POST /api/cluster/rotate, the admin bundle's token),
// renames the staged bundle over the admin bundle (so `ews cluster board`
// mints bundles of the rotated cluster), then follows the roll until
// every live board has it or --timeout, naming the boards it still waits
// for. The admin bundle is a valid one in every outcome: the old until
// the commit, the new after; a rename that fails after the commit leaves
// the new one staged and says where.
func clusterRotate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster rotate", "[--bundle ADMIN] --url URL [--cacert ca.pem] [--token-file F] [--timeout D]",
		"Roll a new gossip key and session secret through the running boards, without reflashing, and write them into the admin bundle. Users' tokens and passwords stay; sessions end. A board that is down meanwhile takes them when it is back (TLS: on its certificate; without TLS flash it a new board bundle). A side without a majority of the boards refuses (no quorum).", stderr)
	af := addAdminFlags(fs, "the admin bundle (its token; rewritten with the new secrets", "any board's HTTP address")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to follow the roll")
	if code, ok := af.parse(fs, args, 0, "ews cluster rotate: want --bundle ADMIN and --url URL, no other argument", stderr); !ok {
		return code
	}
	b, base, token, c, code := af.client("cluster rotate", 15*time.Second, stderr)
	if code != exitOK {
		return code
	}
	bundlePath := af.bundle
	signer, err := b.Signer()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster rotate: %s: %v\n", *bundlePath, err)
		return exitUsage
	}
	started := time.Now()
	var st rotate.Status
	if code := rotateCall(c, http.MethodGet, base, token, nil, &st, stderr); code != exitOK {
		return code
	}
	if !st.Finished {
		fmt.Fprintf(stderr, "ews cluster rotate: rotation %d is still rolling (phase %s, waiting for %s): try again once it is done\n",
			st.Gen, st.Phase, strings.Join(st.Waiting, ", "))
		return exitError
	}
	if st.Gen >= rotate.MaxGen { // only a forged rotation gets there; the next would not fit a bundle, or wrap to 0
		fmt.Fprintf(stderr, "ews cluster rotate: the cluster is at generation %d, and the last a bundle holds is %d: no rotation can follow (a forged rotation? flash the boards new bundles)\n", st.Gen, rotate.MaxGen)
		return exitError
	}
	// the next generation's secrets, signed with the admin's key: boards
	// take them only so signed
	gen := st.Gen + 1
	key, session := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	_, _ = rand.Read(session)
	store := b.Store()
	// the admin bundle of the rotated cluster, written and checked before
	// anything is committed: a bundle that cannot be written stops here
	next := *b
	next.StoreKey = base64.StdEncoding.EncodeToString(store)
	next.Key = base64.StdEncoding.EncodeToString(key)
	next.SessionSecret = base64.StdEncoding.EncodeToString(session)
	next.Generation = gen
	staged, err := bundle.Stage(*bundlePath, &next)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster rotate: nothing committed, %s kept as it was: %v\n", *bundlePath, err)
		return exitError
	}
	defer staged.Discard()
	body, _ := json.Marshal(rotate.Request{Key: key, Session: session, StoreID: rotate.StoreID(store),
		Gen: gen, Sig: ed25519.Sign(signer, rotate.Signed(gen, key, session))})
	st = rotate.Status{} // the committed rotation's, nothing of the one before
	if code := rotateCall(c, http.MethodPost, base, token, body, &st, stderr); code != exitOK {
		return code
	}
	// committed: the cluster moves to these secrets whatever happens
	// next, so the admin bundle takes them now
	if err := staged.Commit(); err != nil {
		fmt.Fprintf(stderr, "ews cluster rotate: rotation %d is committed, but %s was not replaced (%v): the new admin bundle is %s; move it over the old one\n", gen, *bundlePath, err, staged.Path())
		return exitError
	}
	st.Gen = gen // what the bundle holds and the polls follow
	fmt.Fprintf(stdout, "rotation %d committed; %s now holds the new gossip key and session secret (mint new board bundles from it)\n", st.Gen, *bundlePath)
	deadline := time.Now().Add(*timeout)
	poll := time.NewTicker(100 * time.Millisecond) // the boards' progress, until --timeout
	defer poll.Stop()
	for !st.Finished && time.Now().Before(deadline) {
		<-poll.C
		var now rotate.Status
		if rotateCall(c, http.MethodGet, base, token, nil, &now, io.Discard) == exitOK && now.Gen == st.Gen {
			st = now
		}
	}
	if !st.Finished {
		fmt.Fprintf(stderr, "ews cluster rotate: rotation %d still rolling after %v: phase %s, waiting for %s (it goes on; `ews cluster rotate` again says when it is done)\n",
			st.Gen, *timeout, st.Phase, strings.Join(st.Waiting, ", "))
		return exitError
	}
	fmt.Fprintf(stdout, "rotation %d rolled through every live board in %v: the old gossip key, board credential and sessions are refused\n",
		st.Gen, time.Since(started).Round(time.Millisecond))
	return exitOK
}

// rotateCall sends one request to rotate.Path and decodes its status.
func rotateCall(c *http.Client, method, base, token string, body []byte, st *rotate.Status, stderr io.Writer) int {
	out, code := boardCall(c, "cluster rotate", method, base, rotate.Path, token, body, http.StatusOK, stderr)
	if code != exitOK {
		return code
	}
	if err := json.Unmarshal(out, st); err != nil {
		fmt.Fprintf(stderr, "ews cluster rotate: %s: %v\n", base, err)
		return exitError
	}
	return exitOK
}
