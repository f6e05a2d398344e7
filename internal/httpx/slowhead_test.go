package httpx

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
)

// boardTLS is the TLS config of a board's listener (the cluster CA's server
// config, which asks for a client certificate only if given) and a client
// trusting that CA.
func boardTLS(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	certDER, keyDER, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := clustertls.ParseCA(certDER, keyDER)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("slowhead", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ca.ServerConfig(cert), &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}
}

// TestSlowHead: a request header that does not arrive within
// ReadHeaderTimeout gets a 408 with a JSON body, over plain HTTP and TLS; an
// idle kept-alive connection and a TLS handshake that never happens are
// closed without an answer; a request in time is served as usual.
func TestSlowHead(t *testing.T) {
	// The TLS cases' handshake shares the head timeout (net/http sets it
	// before the handshake); under -race on a loaded machine a handshake
	// alone took over 150 ms, so they get 1 s.
	const headTO, tlsHeadTO = 150 * time.Millisecond, time.Second
	srvTLS, cliTLS := boardTLS(t)
	full := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	cases := []struct {
		name   string
		tls    bool
		first  string // a whole first request, answered before the slow part ("" none)
		slow   string // bytes sent, then nothing more
		raw    bool   // TLS: speak no TLS at all (the handshake times out)
		want   string // prefix of the answer to the slow part; "" for a silent close
		wantIn string // and a part of it
	}{
		{name: "fresh connection sends nothing", want: "HTTP/1.1 408 Request Timeout", wantIn: `{"error":"httpx: request header not received within 150ms"}`},
		{name: "partial header", slow: "GET / HTTP/1.1\r\nHo", want: "HTTP/1.1 408", wantIn: "Connection: close"},
		{name: "marked as the listener's", slow: "GET / HTTP/1.1\r\n", want: "HTTP/1.1 408", wantIn: "X-Ews-Refused: head-timeout"},
		{name: "kept-alive connection idle", first: full, want: ""},
		{name: "second request partial", first: full, slow: "GET /b HTTP/1.1\r\n", want: "HTTP/1.1 408"},
		{name: "request in time", slow: full, want: "HTTP/1.1 200 OK"},
		{name: "tls: fresh connection sends nothing", tls: true, want: "HTTP/1.1 408", wantIn: `"error"`},
		{name: "tls: partial header", tls: true, slow: "POST /x HTTP/1.1\r\n", want: "HTTP/1.1 408"},
		{name: "tls: kept-alive connection idle", tls: true, first: full, want: ""},
		{name: "tls: request in time", tls: true, slow: full, want: "HTTP/1.1 200 OK"},
		{name: "tls: no handshake", tls: true, raw: true, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var cfg *tls.Config
			to := headTO
			if tc.tls {
				cfg, to = srvTLS, tlsHeadTO
			}
			srv := &http.Server{
				Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }),
				ReadHeaderTimeout: to,
				IdleTimeout:       2 * to,
				ConnState:         SlowHeadConnState,
			}
			go func() { _ = srv.Serve(SlowHeadListener(ln, cfg, to)) }()
			t.Cleanup(func() { _ = srv.Close() })

			var c net.Conn
			c, err = net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.tls && !tc.raw {
				tcc := tls.Client(c, cliTLS)
				if err := tcc.Handshake(); err != nil {
					t.Fatal(err)
				}
				c = tcc
			}
			if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			if tc.first != "" {
				if _, err := io.WriteString(c, tc.first); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("first request: %v", err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("first request: %d", resp.StatusCode)
				}
			}
			if tc.slow != "" {
				if _, err := io.WriteString(c, tc.slow); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readSome(br, tc.want)
			if err != nil {
				t.Fatalf("read: %v (got %q)", err, got)
			}
			if tc.want == "" {
				if got != "" {
					t.Fatalf("want a silent close, got %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) || !strings.Contains(got, tc.wantIn) {
				t.Fatalf("got %q, want it to start with %q and hold %q", got, tc.want, tc.wantIn)
			}
		})
	}
}

// readSome reads until the connection ends, or for a 200 until its body
// "ok" is in; a read that times out is an error.
func readSome(r io.Reader, want string) (string, error) {
	var out []byte
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		out = append(out, b[:n]...)
		if strings.HasPrefix(want, "HTTP/1.1 200") && strings.HasSuffix(string(out), "ok") {
			return string(out), nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return string(out), err
			}
			return string(out), nil // EOF or a reset: the server closed
		}
	}
}
