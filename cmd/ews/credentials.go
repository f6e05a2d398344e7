package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
)

// credFlags are the credential flags the commands that talk to a board
// take alike: --bundle (an admin bundle: its token and CA; a board
// bundle: its CA), --token-file (else $EWS_TOKEN) and --cacert.
type credFlags struct {
	bundle, tokenFile, cacert *string
}

// addCredFlags declares them on fs; bundleHelp says what --bundle is to
// this command.
func addCredFlags(fs *flag.FlagSet, bundleHelp string) *credFlags {
	return &credFlags{
		bundle:    fs.String("bundle", "", bundleHelp),
		tokenFile: fs.String("token-file", "", "file holding an admin's token (default $EWS_TOKEN; an admin bundle's token otherwise)"),
		cacert:    fs.String("cacert", "", "PEM file of the cluster CA for boards with TLS on (ews cluster ca ADMIN > ca.pem; default the bundle's CA)"),
	}
}

// creds are what a command calls a board with.
type creds struct {
	token  string
	client *http.Client
	tls    *tls.Config    // the client's: the CA trusted; nil when none was given
	bundle *bundle.Bundle // the --bundle read, nil without one
}

// load reads the flags: the token from --token-file, else the admin
// bundle, else $EWS_TOKEN; the CA from --cacert, else the bundle. A file
// that cannot be read is said on stderr as cmd, and the answer is
// exitUsage; so is no token when needToken.
func (f *credFlags) load(cmd string, timeout time.Duration, needToken bool, stderr io.Writer) (creds, int) {
	c := creds{token: os.Getenv("EWS_TOKEN"), client: &http.Client{Timeout: timeout}}
	var pool *x509.CertPool
	if *f.bundle != "" {
		b, err := bundle.Read(*f.bundle)
		if err != nil {
			fmt.Fprintf(stderr, "ews %s: --bundle: %v\n", cmd, err)
			return c, exitUsage
		}
		c.bundle = b
		if b.IsAdmin() {
			c.token = b.Token
		}
		if ca, err := b.CA(); err == nil && ca != nil {
			pool = ca.Pool
		}
	}
	if *f.tokenFile != "" {
		t, err := os.ReadFile(*f.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "ews %s: --token-file: %v\n", cmd, err)
			return c, exitUsage
		}
		c.token = strings.TrimSpace(string(t))
	}
	if needToken && c.token == "" {
		fmt.Fprintf(stderr, "ews %s: no token: pass --bundle ADMIN, --token-file F or set $EWS_TOKEN to an admin's token\n", cmd)
		return c, exitUsage
	}
	if *f.cacert != "" {
		p, err := readCA(*f.cacert)
		if err != nil {
			fmt.Fprintf(stderr, "ews %s: %v\n", cmd, err)
			return c, exitUsage
		}
		pool = p
	}
	if pool != nil {
		c.tls = &tls.Config{RootCAs: pool}
		c.client.Transport = &http.Transport{TLSClientConfig: c.tls}
	}
	return c, exitOK
}

// tlsHint is what to add to an error a board's certificate caused: the
// flag that fixes it. "" for any other error.
func tlsHint(err error) string {
	if err == nil {
		return ""
	}
	var host x509.HostnameError
	if errors.As(err, &host) {
		return " (the board's certificate does not name this address: use its name, https://NAME.local:8443, or mint its bundle with that address: ews cluster board NAME --addr HOST)"
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &verify) || strings.Contains(err.Error(), "x509: ") {
		return " (a board with TLS on: pass --cacert ca.pem, its cluster CA from `ews cluster ca ADMIN > ca.pem`, or --bundle ADMIN)"
	}
	return ""
}
