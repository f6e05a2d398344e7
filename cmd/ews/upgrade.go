package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/rollout"
)

func cmdUpgrade(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("upgrade", "--url URL --binary PATH [--bundle ADMIN | --token-file PATH] [--cacert FILE]",
		"Rolling firmware upgrade: upload PATH (signed: ews firmware sign) to one board at a time, followers\nfirst and the master last, waiting until each is back in the table, running the new binary. Stops at\nthe first failure (a board that rolls back keeps its old binary). The token is read from --token-file,\nthe admin bundle (--bundle) or $EWS_TOKEN (--token works, and warns: other local users see a command line). With TLS on, over HTTPS:\n--cacert names the cluster CA; a plain URL that redirects to HTTPS works too.", stderr)
	url := fs.String("url", "", "any board of the cluster, e.g. http://10.0.0.11:8080")
	bin := fs.String("binary", "", "the new ews binary (for the boards' arch)")
	token := fs.String("token", "", "API token: visible to other local users in ps; prefer --token-file or $EWS_TOKEN")
	perBoard := fs.Duration("timeout", 2*time.Minute, "how long one board may take to come back")
	cf := addCredFlags(fs, "the admin bundle: its token, and its CA for boards with TLS on")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *url == "" || *bin == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews upgrade: --url and --binary are required")
		return exitUsage
	}
	cr, code := cf.load("upgrade", 10*time.Second, false, stderr)
	if code != exitOK {
		return code
	}
	tok := cr.token // --token-file, else the bundle's, else $EWS_TOKEN
	if *token != "" {
		fmt.Fprintln(stderr, "ews upgrade: warning: --token shows the token to every local user (ps, /proc/PID/cmdline); use --token-file FILE or $EWS_TOKEN")
		if *cf.tokenFile == "" {
			tok = *token
		}
	}
	body, err := os.ReadFile(*bin)
	if err != nil {
		fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
		return exitError
	}
	if len(firmware.Unsigned(body)) == len(body) {
		fmt.Fprintf(stderr, "ews upgrade: %s is not signed, and boards accept only signed firmware: ews firmware sign --bundle ADMIN %s\n", *bin, *bin)
		return exitError
	}
	sum := sha256.Sum256(body)
	r := &rollout.Rollout{
		Body:     func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		SHA256:   hex.EncodeToString(sum[:]),
		Token:    tok,
		PerBoard: *perBoard,
		Progress: func(board, msg string) { fmt.Fprintf(stdout, "%s: %s\n", board, msg) },
	}
	r.TLS = cr.tls
	ctx := context.Background()
	// The boards' URLs take the scheme the view was read over (a TLS
	// board's plain listener redirects to HTTPS), never a fixed http://.
	v, err := r.GetView(ctx, *url)
	if err != nil {
		fmt.Fprintf(stderr, "ews upgrade: read the table: %v%s\n", err, tlsHint(err))
		return exitError
	}
	if err := rollout.Check(v); err != nil {
		fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
		return exitError
	}
	boards := rollout.Order(v, "")
	names := make([]string, len(boards))
	for i, b := range boards {
		names[i] = b.Name
	}
	fmt.Fprintf(stdout, "upgrading %d boards to sha256 %s, in this order: %s\n", len(boards), r.SHA256[:12], strings.Join(names, ", "))
	start := time.Now()
	if err := r.Boards(ctx, boards); err != nil {
		fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "all %d boards run sha256 %s (%.1f s)\n", len(boards), r.SHA256[:12], time.Since(start).Seconds())
	return exitOK
}
