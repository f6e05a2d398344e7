package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// tlsBoard is a board answering over TLS with a certificate of admin's
// CA; it records the tokens it was sent.
type tlsBoard struct {
	srv    *httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newTLSBoard(t *testing.T, admin *bundle.Bundle) *tlsBoard {
	t.Helper()
	board, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := board.BoardCert("ews1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := &tlsBoard{}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.tokens = append(b.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"nodes":[]}`))
	}))
	b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *tlsBoard) sent() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.tokens...)
}

// cluster backup takes --bundle and --cacert as config pull does: the
// admin bundle's token and CA, or a CA file; without them its TLS error
// names --cacert.
func TestBackupCredentials(t *testing.T) {
	dir := t.TempDir()
	admin, _ := bundletest.Ews1(t)
	adminPath := bundletest.Write(t, filepath.Join(dir, "admin.bundle"), admin)
	ca, _ := admin.CA()
	caPath := filepath.Join(dir, "ca.pem")
	tokenPath := filepath.Join(dir, "token")
	testutil.WriteFile(t, caPath, ca.PEM, 0o644)
	testutil.WriteFile(t, tokenPath, []byte("file-token\n"), 0o600)
	t.Setenv("EWS_TOKEN", "")
	for _, c := range []struct {
		name      string
		args      []string
		code      int
		says      string
		wantToken string
	}{
		{"no CA", nil, exitError, "--cacert ca.pem", ""},
		{"the admin bundle", []string{"--bundle", adminPath}, exitOK, "", admin.Token},
		{"a CA file and a token file", []string{"--cacert", caPath, "--token-file", tokenPath}, exitOK, "", "file-token"},
		{"a token file wins over the bundle's", []string{"--bundle", adminPath, "--token-file", tokenPath}, exitOK, "", "file-token"},
		{"a bad CA file", []string{"--cacert", tokenPath}, exitUsage, "want a PEM certificate file", ""},
		{"no bundle there", []string{"--bundle", filepath.Join(dir, "none")}, exitUsage, "--bundle", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTLSBoard(t, admin)
			args := append([]string{"cluster", "backup", "--url", b.srv.URL, "--out", filepath.Join(t.TempDir(), "b.tar.gz")}, c.args...)
			code, _, errs := run(args...)
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Fatalf("%d %q, want %d saying %q", code, errs, c.code, c.says)
			}
			if c.wantToken == "" {
				return
			}
			for _, tok := range b.sent() {
				if tok != c.wantToken {
					t.Errorf("sent token %q, want %q", tok, c.wantToken)
				}
			}
			if len(b.sent()) == 0 {
				t.Errorf("nothing was asked")
			}
		})
	}
}

func TestTLSHint(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("connection refused"), ""},
		{fmt.Errorf("get: %w", x509.UnknownAuthorityError{}), "--cacert"},
		{&tls.CertificateVerificationError{Err: errors.New("bad")}, "--cacert"},
		{fmt.Errorf("get: %w", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "10.0.0.9"}), "--addr"},
		{errors.New(`Get "https://x": tls: failed to verify certificate: x509: certificate signed by unknown authority`), "--cacert"},
	} {
		if got := tlsHint(c.err); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want it naming %q", c.err, got, c.want)
		}
	}
}

// Every command that talks to a board takes --url, --bundle, --token-file
// and --cacert alike (the contract's fifth wave): none says the flag is
// not defined; each reads the files it was given.
func TestEveryBoardCommandTakesTheCredentialFlags(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none")
	creds := []string{"--url", "http://127.0.0.1:1", "--bundle", none, "--token-file", none, "--cacert", none}
	for _, args := range [][]string{
		{"status"},
		{"config", "pull"},
		{"config", "push", "cluster.toml"},
		{"cluster", "backup", "--out", filepath.Join(dir, "b.tar.gz")},
		{"cluster", "restore", "--from", none},
		{"cluster", "raft"},
		{"cluster", "revoke", "ews3"},
		{"cluster", "rotate"},
		{"user", "list"},
		{"upgrade", "--binary", none},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, errs := run(append(append([]string{}, args...), creds...)...)
			if strings.Contains(errs, "not defined") || code == exitOK {
				t.Errorf("exit %d: %s", code, errs)
			}
		})
	}
}
