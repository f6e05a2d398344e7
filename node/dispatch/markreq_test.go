package dispatch

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestMarkBoundAndSingleUse: a mark runs only the request it was signed
// for (method, path, query, body, client), once.
func TestMarkBoundAndSingleUse(t *testing.T) {
	client := netip.MustParseAddr("198.51.100.9")
	const path, query, body = "/api/devices/r1/set", "value=1", `{"v":1}`
	sum := sha256.Sum256([]byte(body))
	signed := &Binding{Method: "POST", Path: path, Query: query, Body: BodyDigest, Sum: sum, Client: client}
	big := strings.Repeat("b", MaxDigestBody+1)
	tests := []struct {
		name    string
		sign    *Binding
		kind    Kind
		url     string
		body    string
		xff     string // X-Forwarded-For as the master sets it
		remote  string
		inQuery bool // mark in the query string
		queryOK bool // redirect mode
		twice   bool // send the same mark again
		want    string
	}{
		{"fresh", signed, KindDispatch, path + "?" + query, body, "198.51.100.9", "10.0.0.1:5000", false, false, false, ""},
		{"replayed", signed, KindDispatch, path + "?" + query, body, "198.51.100.9", "10.0.0.1:5000", false, false, true, RefuseReplayed},
		{"another query", signed, KindDispatch, path + "?value=0", body, "198.51.100.9", "10.0.0.1:5000", false, false, false, RefusePath},
		{"no query", signed, KindDispatch, path, body, "198.51.100.9", "10.0.0.1:5000", false, false, false, RefusePath},
		{"another body", signed, KindDispatch, path + "?" + query, `{"v":2}`, "198.51.100.9", "10.0.0.1:5000", false, false, false, RefusePath},
		{"no body", signed, KindDispatch, path + "?" + query, "", "198.51.100.9", "10.0.0.1:5000", false, false, false, RefusePath},
		{"another client", signed, KindDispatch, path + "?" + query, body, "203.0.113.66", "10.0.0.1:5000", false, false, false, RefuseClient},
		{"client behind a follower", signed, KindDispatch, path + "?" + query, body, "198.51.100.9, 10.0.0.2", "10.0.0.1:5000", false, false, false, ""},
		{"large body bound by length", &Binding{Method: "POST", Path: path, Body: BodyLength, Length: int64(len(big))}, KindDispatch, path, big, "", "10.0.0.1:5000", false, false, false, ""},
		{"large body of another length", &Binding{Method: "POST", Path: path, Body: BodyLength, Length: int64(len(big))}, KindDispatch, path, big + "x", "", "10.0.0.1:5000", false, false, false, RefusePath},
		{"query form in redirect mode", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindRedirect, "/p?a=1", "", "", "198.51.100.9:4000", true, true, false, ""},
		{"query form, replayed", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindRedirect, "/p?a=1", "", "", "198.51.100.9:4000", true, true, true, RefuseReplayed},
		{"query form for another path", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindRedirect, "/q?a=1", "", "", "198.51.100.9:4000", true, true, false, RefusePath},
		{"query form from another client", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindRedirect, "/p?a=1", "", "198.51.100.9", "203.0.113.66:4000", true, true, false, RefuseClient},
		{"query form in proxy mode", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindRedirect, "/p?a=1", "", "", "198.51.100.9:4000", true, false, false, RefuseQuery},
		{"dispatch mark in the query", &Binding{Method: "GET", Path: "/p", Query: "a=1", Client: client}, KindDispatch, "/p?a=1", "", "", "198.51.100.9:4000", true, true, false, RefuseKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := NewMarker(RandomKey(), MarkOptions{})
			tok := m.SignString(tt.kind, 4, "ews2", tt.sign)
			send := func() (Mark, error) {
				url := tt.url
				if tt.inQuery {
					sep := "?"
					if strings.Contains(url, "?") {
						sep = "&"
					}
					url += sep + QueryMark + "=" + tok
				}
				r := httptest.NewRequest(tt.sign.Method, url, strings.NewReader(tt.body))
				if tt.body == "" {
					r.Body, r.ContentLength = http.NoBody, 0
				}
				r.RemoteAddr = tt.remote
				if tt.xff != "" {
					r.Header.Set("X-Forwarded-For", tt.xff)
				}
				if !tt.inQuery {
					r.Header.Set(HeaderMark, tok)
				}
				var body []byte
				if tt.body != "" {
					body = []byte(tt.body) // as the front door read it
				}
				return m.Verify(r, body, "ews2", tt.queryOK)
			}
			mk, err := send()
			if tt.twice {
				if err != nil {
					t.Fatalf("first use refused: %v", err)
				}
				mk, err = send()
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if mk.Epoch != 4 || mk.Client != tt.sign.Client {
					t.Fatalf("mark %+v", mk)
				}
				return
			}
			var me *MarkError
			if !errors.As(err, &me) || me.Reason != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSeenMarksBounded: the replay cache forgets expired ids and, when
// full, the oldest one; it never grows past its size.
func TestSeenMarksBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newSeenMarks(3)
	id := func(b byte) (x [markIDLen]byte) { x[0] = b; return }
	for i := range byte(5) {
		if !s.add(id(i), now.Add(5*time.Second), now) {
			t.Fatalf("id %d refused on first use", i)
		}
	}
	if s.len() != 3 {
		t.Fatalf("len %d, want 3", s.len())
	}
	if s.add(id(4), now.Add(5*time.Second), now) {
		t.Fatal("id 4 accepted twice")
	}
	if !s.add(id(0), now.Add(5*time.Second), now) {
		t.Fatal("id 0 was evicted as oldest, yet still refused")
	}
	if !s.add(id(9), now.Add(10*time.Second), now.Add(6*time.Second)) || s.len() != 1 {
		t.Fatalf("expired ids kept: len %d", s.len())
	}
}
