package dispatch

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/sched"
)

// A device pinned to a board only ever runs there, and a pinned request is
// not retried elsewhere when its board fails.
func TestPinned(t *testing.T) {
	pin := func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/api/devices/r3/") {
			return "ews3"
		}
		return "any"
	}
	tc := newCluster(t, clusterOpts{pin: pin, masterRuns: true})
	m, b3 := tc.boards[0], tc.boards[2]
	for i := 0; i < 6; i++ {
		resp, body := do(t, nil, "GET", m.srv.URL+"/api/devices/r3/read", nil, "")
		if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews3" {
			t.Fatalf("pinned request ran on %q (%d)", e.Board, resp.StatusCode)
		}
	}
	b3.mode.Store(modeDie)
	resp, body := do(t, nil, "GET", m.srv.URL+"/api/devices/r3/read", nil, "")
	if resp.StatusCode != 502 || tc.boards[1].started.Load() != 0 || m.front.Completed() != 0 {
		t.Fatalf("pinned GET on a dead board: %d %s (ews2 ran %d, master %d)", resp.StatusCode, body, tc.boards[1].started.Load(), m.front.Completed())
	}
}

func TestStickyCookie(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, sticky: true})
	resp, body := do(t, nil, "GET", tc.boards[0].srv.URL+"/", nil, "")
	var got string
	for _, c := range resp.Cookies() {
		if c.Name == sched.CookieName {
			got = c.Value
		}
	}
	if e := decode[echo](t, body); got != "ews2" || e.Board != "ews2" {
		t.Fatalf("cookie %q, board %q", got, e.Board)
	}
	// a client that already has the cookie is not sent it again
	resp, _ = do(t, nil, "GET", tc.boards[0].srv.URL+"/", map[string]string{"Cookie": sched.CookieName + "=ews2"}, "")
	if len(resp.Cookies()) != 0 {
		t.Fatalf("cookie set again: %v", resp.Cookies())
	}
}

// The master takes the client address a non-master vouches for in a valid
// via mark, and the peer's address otherwise.
func TestClientAddr(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1"}})
	f := tc.boards[0].front
	signer, _ := NewMarker(tc.key, MarkOptions{})
	forger, _ := NewMarker(RandomKey(), MarkOptions{})
	client := netip.MustParseAddr("198.51.100.4")
	tests := []struct {
		name, via string
		want      string
	}{
		{"no via", "", "192.0.2.1"},
		{"valid via", signer.SignString(KindVia, 1, "ews1", bind("GET", "/p", client)), "198.51.100.4"},
		{"forged via", forger.SignString(KindVia, 1, "ews1", bind("GET", "/p", client)), "192.0.2.1"},
		{"via for another master", signer.SignString(KindVia, 1, "ews9", bind("GET", "/p", client)), "192.0.2.1"},
		{"dispatch mark as via", signer.SignString(KindDispatch, 1, "ews1", bind("GET", "/p", client)), "192.0.2.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/p", nil) // RemoteAddr 192.0.2.1:1234
			if tt.via != "" {
				r.Header.Set(HeaderVia, tt.via)
			}
			got, vouched := f.viaClient(r, "ews1")
			if got.String() != tt.want || vouched != (tt.want != "192.0.2.1") {
				t.Fatalf("client %v (vouched %v), want %s", got, vouched, tt.want)
			}
		})
	}
}
