package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node/confstore"
)

const configRemoteHelp = "The cluster's configuration store (GET/PUT /api/config on any board), for people who keep it in git.\n" +
	"  ews config pull --url URL [--out FILE]             print (or write) the document; its version on stderr\n" +
	"  ews config push FILE --url URL (--version N | --force)  make FILE the next version; N is the version it was made\n" +
	"                                                     from (412 when another change came since); --force: over the current one\n" +
	"An admin's credentials: --bundle ADMIN (its token and CA), else --token-file F or $EWS_TOKEN; --cacert ca.pem for TLS."

// configRemote is `ews config pull|push`.
func configRemote(sub string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("config "+sub, "[FILE] --url URL [--bundle ADMIN | --token-file F] [--cacert ca.pem] [--version N | --force]", configRemoteHelp, stderr)
	url := fs.String("url", "", "any board's HTTP address (required)")
	cf := addCredFlags(fs, "the admin bundle: its token, and its CA for a board with TLS on")
	out := fs.String("out", "", "pull: write the document here (default stdout)")
	version := fs.Uint64("version", 0, "push: the version FILE was made from (412 when another change came since)")
	force := fs.Bool("force", false, "push: without --version, replace whatever version is current")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	if *url == "" || (sub == "pull" && fs.NArg() != 0) || (sub == "push" && fs.NArg() != 1) {
		fmt.Fprintf(stderr, "ews config %s: want --url URL%s\n", sub, map[string]string{"push": " and one FILE"}[sub])
		return exitUsage
	}
	base := boardURL(*url)
	cr, code := cf.load("config "+sub, *timeout, true, stderr)
	if code != exitOK {
		return code
	}
	if cr.bundle != nil {
		if err := cr.bundle.NeedAdmin(*cf.bundle); err != nil {
			fmt.Fprintf(stderr, "ews config %s: %v\n", sub, err)
			return exitUsage
		}
	}
	token, client := cr.token, cr.client
	call := func(method, path string, body io.Reader, hdr map[string]string) (*http.Response, []byte, error) {
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		return resp, b, err
	}
	fail := func(resp *http.Response, b []byte) int {
		var e confstore.Refusal
		_ = json.Unmarshal(b, &e)
		switch {
		case len(e.Problems) > 0:
			for _, p := range e.Problems {
				fmt.Fprintln(stderr, p.Text)
			}
			fmt.Fprintf(stderr, "ews config %s: refused: %s, nothing changed\n", sub, count(len(e.Problems), "problem"))
		case e.Error != "":
			fmt.Fprintf(stderr, "ews config %s: %s: %s\n", sub, resp.Status, e.Error)
		default:
			fmt.Fprintf(stderr, "ews config %s: %s: %s\n", sub, resp.Status, strings.TrimSpace(string(b)))
		}
		return exitError
	}
	resp, cur, err := call(http.MethodGet, "/api/config", nil, nil)
	if err != nil {
		fmt.Fprintf(stderr, "ews config %s: %v%s\n", sub, err, tlsHint(err))
		return exitError
	}
	if resp.StatusCode != http.StatusOK {
		return fail(resp, cur)
	}
	etag := resp.Header.Get("ETag")
	if sub == "pull" {
		if *out != "" {
			if err := os.WriteFile(*out, cur, 0o644); err != nil {
				fmt.Fprintf(stderr, "ews config pull: %v\n", err)
				return exitError
			}
		} else {
			stdout.Write(cur)
		}
		fmt.Fprintf(stderr, "ews config pull: version %s\n", strings.Trim(etag, `"`))
		return exitOK
	}
	text, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ews config push: %v\n", err)
		return exitUsage
	}
	switch {
	case *version > 0:
		etag = `"` + strconv.FormatUint(*version, 10) + `"`
	case !*force:
		// blind, the push would undo whatever changed since FILE was pulled
		fmt.Fprintf(stderr, "ews config push: give --version N, the version %s was pulled at (ews config pull prints it), so a change made since is not overwritten; or --force to replace the current version %s whatever it holds\n", fs.Arg(0), strings.Trim(etag, `"`))
		return exitUsage
	}
	resp, b, err := call(http.MethodPut, "/api/config", strings.NewReader(string(text)),
		map[string]string{"If-Match": etag, "Content-Type": "application/toml"})
	if err != nil {
		fmt.Fprintf(stderr, "ews config push: %v%s\n", err, tlsHint(err))
		return exitError
	}
	if resp.StatusCode != http.StatusOK {
		return fail(resp, b)
	}
	var a struct {
		Version       uint64   `json:"version"`
		RestartNeeded []string `json:"restart_needed"`
	}
	_ = json.Unmarshal(b, &a)
	fmt.Fprintf(stdout, "ews config push: version %d\n", a.Version)
	if len(a.RestartNeeded) > 0 {
		fmt.Fprintf(stdout, "restart needed for: %s\n", strings.Join(a.RestartNeeded, ", "))
	} else {
		fmt.Fprintln(stdout, "every board applies it now; GET /api/config/status says what each did")
	}
	return exitOK
}
