package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
)

// adminClient reads the admin bundle at bundlePath (refusing a board
// bundle) and makes the client the admin commands (cluster revoke, cluster
// rotate) call a board with: it trusts cacert, else the bundle's CA. It
// returns the board's base URL; on a bad bundle or CA file it has said why
// on stderr as cmd and returns exitUsage.
func adminClient(cmd, bundlePath, url, cacert string, timeout time.Duration, stderr io.Writer) (*bundle.Bundle, string, *http.Client, int) {
	b, err := bundle.Read(bundlePath)
	if err == nil {
		err = b.NeedAdmin(bundlePath)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
		return nil, "", nil, exitUsage
	}
	pool := x509.NewCertPool()
	if cacert != "" {
		if pool, err = readCA(cacert); err != nil {
			fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
			return nil, "", nil, exitUsage
		}
	} else if ca, err := b.CA(); err == nil && ca != nil {
		pool = ca.Pool
	}
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return b, boardURL(url), c, exitOK
}
