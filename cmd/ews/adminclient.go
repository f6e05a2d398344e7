package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
)

// adminClient reads the admin bundle at bundlePath (refusing a board
// bundle) and makes the client the admin commands (cluster revoke, cluster
// rotate) call a board with: it trusts cacert, else the bundle's CA. It
// returns the board's base URL and the token to send: tokenFile's, else
// the bundle's (the bundle itself is left as it is: rotate writes it
// back). On a bad bundle, CA or token file it has said why on stderr as
// cmd and returns exitUsage.
func adminClient(cmd, bundlePath, url, cacert, tokenFile string, timeout time.Duration, stderr io.Writer) (*bundle.Bundle, string, string, *http.Client, int) {
	b, err := bundle.Read(bundlePath)
	if err == nil {
		err = b.NeedAdmin(bundlePath)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
		return nil, "", "", nil, exitUsage
	}
	token := b.Token
	if tokenFile != "" {
		t, err := os.ReadFile(tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "ews %s: --token-file: %v\n", cmd, err)
			return nil, "", "", nil, exitUsage
		}
		token = strings.TrimSpace(string(t))
	}
	pool := x509.NewCertPool()
	if cacert != "" {
		if pool, err = readCA(cacert); err != nil {
			fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
			return nil, "", "", nil, exitUsage
		}
	} else if ca, err := b.CA(); err == nil && ca != nil {
		pool = ca.Pool
	}
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return b, boardURL(url), token, c, exitOK
}

// defaultAdminBundle is --bundle's default for the admin commands:
// ./admin.bundle, else ./cluster.bundle (the name earlier builds gave it).
func defaultAdminBundle() string {
	if _, err := os.Stat(adminFile); err == nil {
		return adminFile
	}
	return bundle.DefaultName
}

// adminFlags are the flags of the admin commands that sign with the admin
// bundle (cluster revoke, cluster rotate): --bundle, --url, --cacert,
// --token-file, as every command that talks to a board takes them.
type adminFlags struct {
	bundle, url, cacert, tokenFile *string
}

// addAdminFlags declares them on fs; bundleHelp and urlHelp say what they
// are to this command.
func addAdminFlags(fs *flag.FlagSet, bundleHelp, urlHelp string) *adminFlags {
	return &adminFlags{
		bundle:    fs.String("bundle", "", bundleHelp+"; default ./"+adminFile+", else ./"+bundle.DefaultName+")"),
		url:       fs.String("url", "", urlHelp),
		cacert:    fs.String("cacert", "", "PEM file of the cluster CA for a board with TLS on (default: the bundle's CA)"),
		tokenFile: fs.String("token-file", "", "an admin's token to send instead of the bundle's (after `ews user rotate admin`)"),
	}
}

// client is adminClient of the flags (the bundle defaulted).
func (f *adminFlags) client(cmd string, timeout time.Duration, stderr io.Writer) (*bundle.Bundle, string, string, *http.Client, int) {
	if *f.bundle == "" {
		*f.bundle = defaultAdminBundle()
	}
	return adminClient(cmd, *f.bundle, *f.url, *f.cacert, *f.tokenFile, timeout, stderr)
}

// parse parses args (flags before or after the arguments) for an admin
// command taking nargs arguments: a missing --url, another count or an
// empty argument is refused with want on stderr (exitUsage); ok false
// means return code now (exitOK for --help).
func (f *adminFlags) parse(fs *flag.FlagSet, args []string, nargs int, want string, stderr io.Writer) (code int, ok bool) {
	if code, ok := parse(fs, interleave(args, nil)); !ok {
		return code, false
	}
	if *f.url == "" || fs.NArg() != nargs || slices.Contains(fs.Args(), "") {
		fmt.Fprintln(stderr, want)
		return exitUsage, false
	}
	return exitOK, true
}

// adminPost POSTs v as JSON to base+path with the admin's token and reads
// the answer (at most 1 MiB); an answer other than want is an error naming
// the board, its status and what it said. cmd names the command in the
// error, which stderr gets; the exit code is returned with the body.
func adminPost(c *http.Client, cmd, base, path, token string, v any, want int, stderr io.Writer) ([]byte, int) {
	body, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
		return nil, exitError
	}
	return boardCall(c, cmd, http.MethodPost, base, path, token, body, want, stderr)
}

// boardCall sends method path to the board at base, body (JSON, nil for
// none) and token (none when "") with it, and returns the answer's body
// when its status is want. Otherwise stderr gets the error, as cmd: the
// board's status and message, or why it was not reached (tlsHint); the
// exit code is returned with the body.
func boardCall(c *http.Client, cmd, method, base, path, token string, body []byte, want int, stderr io.Writer) ([]byte, int) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "ews %s: %v%s\n", cmd, err, tlsHint(err))
		return nil, exitError
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != want {
		fmt.Fprintf(stderr, "ews %s: %s: %s %s\n", cmd, base, resp.Status, strings.TrimSpace(string(out)))
		return nil, exitError
	}
	return out, exitOK
}
