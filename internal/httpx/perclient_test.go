package httpx

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// One address holds at most max connections (docs/NOTES.md, Security:
// per-client caps); one more is answered 429 with Retry-After at once, a
// closed one gives its place back, and an exempt address is not counted.
func TestPerClientCap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exempt bool
		want   int // status of the third connection's request
	}{
		{"capped", false, http.StatusTooManyRequests},
		{"exempt", true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := LimitPerClient(raw, 2, false, func(netip.Addr) bool { return tc.exempt })
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			var held []net.Conn
			for range 2 {
				c, err := net.Dial("tcp", raw.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
			lo := netip.MustParseAddr("127.0.0.1")
			if !tc.exempt {
				testutil.Eventually(t, "two connections counted", func() bool { return ln.Open(lo) == 2 })
			}
			if got := ask(t, raw.Addr().String()); got.StatusCode != tc.want {
				t.Fatalf("third connection: %d, want %d", got.StatusCode, tc.want)
			} else if tc.want == http.StatusTooManyRequests && got.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			held[0].Close()
			if !tc.exempt {
				testutil.Eventually(t, "a closed connection gives its place back", func() bool { return ln.Open(lo) == 1 })
				if got := ask(t, raw.Addr().String()); got.StatusCode != http.StatusOK {
					t.Fatalf("after a close: %d, want 200", got.StatusCode)
				}
			}
			held[1].Close()
		})
	}
}

// ask sends one GET on a new connection and reads the answer's header.
func ask(t *testing.T, addr string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
