package clustertls

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newCA(t *testing.T) *CA {
	t.Helper()
	return parsedCA(t)(NewCA(time.Now()))
}

// parsedCA is what a CA maker returned, parsed; t fails on any error.
func parsedCA(t *testing.T) func(cert, key []byte, err error) *CA {
	return func(cert, key []byte, err error) *CA {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ca, err := ParseCA(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return ca
	}
}

func issue(t *testing.T, ca *CA, name string) tls.Certificate {
	t.Helper()
	c, err := ca.Issue(name, []string{"10.0.0.12", "ews2.local", ""})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A board's HTTPS listener on loopback: it answers with the peer name it
// read from the client certificate.
func TestMutualTLS(t *testing.T) {
	ca, stranger := newCA(t), newCA(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := PeerName(r.TLS)
		if !ok {
			name = "-"
		}
		io.WriteString(w, name)
	}))
	srv.TLS = ca.ServerConfig(issue(t, ca, "ews1"))
	srv.StartTLS()
	defer srv.Close()

	get := func(cfg *tls.Config) (string, error) {
		tr := &http.Transport{TLSClientConfig: cfg}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(srv.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	cases := []struct {
		name    string
		cfg     *tls.Config
		want    string // body; "" means the request must fail
		errPart string
	}{
		{"cluster board", ca.ClientConfig(issue(t, ca, "ews2")), "ews2", ""},
		{"browser trusting the CA, no certificate", &tls.Config{RootCAs: ca.Pool}, "-", ""},
		{"certificate of another cluster", &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{issue(t, stranger, "ews2")}}, "", "certificate"},
		{"client of another cluster", stranger.ClientConfig(issue(t, stranger, "ews2")), "", "certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := get(c.cfg)
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("got %q, want the handshake refused", got)
			case c.want == "" && !strings.Contains(err.Error(), c.errPart):
				t.Fatalf("err %v, want it to mention %q", err, c.errPart)
			case c.want != "" && (err != nil || got != c.want):
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestIssueNamesTheBoard(t *testing.T) {
	ca := newCA(t)
	c := issue(t, ca, "ews2")
	if c.Leaf.Subject.CommonName != "ews2" || c.Leaf.DNSNames[0] != "ews2" {
		t.Fatalf("CN %q, DNS %v", c.Leaf.Subject.CommonName, c.Leaf.DNSNames)
	}
	for _, h := range []string{"ews2", "ews2.local", "localhost", "10.0.0.12", "127.0.0.1"} {
		if err := c.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not name %s: %v", h, err)
		}
	}
	if err := c.Leaf.VerifyHostname("10.0.0.13"); err == nil {
		t.Error("certificate names a host it should not")
	}
	if !c.Leaf.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("validity ends %v, want the CA's %v", c.Leaf.NotAfter, ca.Cert.NotAfter)
	}
	verifyOnly, err := ParseCA(ca.Cert.Raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyOnly.Issue("ews3", nil); err == nil {
		t.Error("a CA without its key issued a certificate")
	}
	if _, err := ParseCA(ca.Cert.Raw, mustKey(t)); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Errorf("another CA's key: %v", err)
	}
}

func mustKey(t *testing.T) []byte {
	_, k, err := NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// BenchmarkHandshake is one mutual TLS handshake between two boards (both
// ends in this process, over loopback TCP): what a new connection costs
// before keep-alive pools amortise it.
func BenchmarkHandshake(b *testing.B) {
	cert, key, err := NewCA(time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ca, _ := ParseCA(cert, key)
	c1, _ := ca.Issue("ews1", nil)
	c2, _ := ca.Issue("ews2", nil)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", ca.ServerConfig(c1))
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	cfg := ca.ClientConfig(c2)
	cfg.ServerName = "ews1"
	for b.Loop() {
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
