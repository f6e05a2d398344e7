package dispatch

import (
	"errors"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestMarkVerify(t *testing.T) {
	key := RandomKey()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	m, err := NewMarker(key, MarkOptions{TTL: 5 * time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewMarker(RandomKey(), MarkOptions{Now: clock})
	later, _ := NewMarker(key, MarkOptions{Now: func() time.Time { return now.Add(6 * time.Second) }})
	lagging, _ := NewMarker(key, MarkOptions{Now: func() time.Time { return now.Add(-4 * time.Second) }})
	early, _ := NewMarker(key, MarkOptions{Now: func() time.Time { return now.Add(-6 * time.Second) }})
	lenient, _ := NewMarker(key, MarkOptions{Skew: 2 * time.Second, Now: func() time.Time { return now.Add(6 * time.Second) }})
	client := netip.MustParseAddr("203.0.113.7")
	good := m.SignString(KindDispatch, 3, "ews2", bind("POST", "/api/devices/r1/toggle", client))
	tamper := func(tok string, i int) string {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	tests := []struct {
		name           string
		v              *Marker
		tok            string
		kind           Kind
		method, path   string
		self           string
		reason         string // "" = accepted
		wantEpoch      uint64
		wantClientSeen bool
	}{
		{"valid", m, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", "", 3, true},
		{"VerifyToken does not use a mark up", m, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", "", 3, true},
		{"forged under another key", m, other.SignString(KindDispatch, 3, "ews2", bind("POST", "/api/devices/r1/toggle", client)), KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseSignature, 0, false},
		{"expired", later, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseExpired, 0, false},
		{"verifier clock 4s behind", lagging, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", "", 3, true},
		{"from the future", early, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseExpired, 0, false},
		{"within skew", lenient, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", "", 3, true},
		{"wrong target", m, good, KindDispatch, "POST", "/api/devices/r1/toggle", "ews3", RefuseTarget, 0, false},
		{"wrong path", m, good, KindDispatch, "POST", "/api/devices/r2/toggle", "ews2", RefusePath, 0, false},
		{"wrong method", m, good, KindDispatch, "GET", "/api/devices/r1/toggle", "ews2", RefusePath, 0, false},
		{"via used as dispatch", m, m.SignString(KindVia, 3, "ews2", bind("POST", "/x", client)), KindDispatch, "POST", "/x", "ews2", RefuseKind, 0, false},
		{"tampered epoch", m, tamper(good, 5), KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseSignature, 0, false},
		{"tampered target", m, tamper(good, 82), KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseSignature, 0, false},
		{"tampered mac", m, tamper(good, len(good)-3), KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseSignature, 0, false},
		{"truncated", m, good[:40], KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseMalformed, 0, false},
		{"not base64", m, "!!!" + good[3:], KindDispatch, "POST", "/api/devices/r1/toggle", "ews2", RefuseMalformed, 0, false},
		{"huge", m, strings.Repeat("A", 4096), KindDispatch, "POST", "/", "ews2", RefuseMalformed, 0, false},
		{"empty", m, "", KindDispatch, "POST", "/", "ews2", RefuseMalformed, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk, err := tt.v.VerifyToken(tt.tok, tt.kind, tt.self, bind(tt.method, tt.path, netip.Addr{}))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if mk.Epoch != tt.wantEpoch || mk.Client != client || mk.Kind != tt.kind {
					t.Fatalf("mark = %+v", mk)
				}
				if !mk.Expiry.Equal(now.Add(5 * time.Second)) {
					t.Fatalf("expiry %v", mk.Expiry)
				}
				return
			}
			var me *MarkError
			if !errors.As(err, &me) || me.Reason != tt.reason {
				t.Fatalf("err = %v, want reason %q", err, tt.reason)
			}
		})
	}
}

func TestMarkSequenceAndRequest(t *testing.T) {
	m, _ := NewMarker(RandomKey(), MarkOptions{})
	a := m.SignString(KindDispatch, 1, "b", bind("GET", "/p", netip.Addr{}))
	b := m.SignString(KindDispatch, 1, "b", bind("GET", "/p", netip.Addr{}))
	if a == b {
		t.Fatal("two marks for the same request are equal: no sequence")
	}
	ma, _ := m.VerifyToken(a, KindDispatch, "b", bind("GET", "/p", netip.Addr{}))
	mb, _ := m.VerifyToken(b, KindDispatch, "b", bind("GET", "/p", netip.Addr{}))
	if mb.Seq != ma.Seq+1 || ma.Client.IsValid() {
		t.Fatalf("seq %d then %d, client %v", ma.Seq, mb.Seq, ma.Client)
	}
	if got := m.Sign(nil, KindDispatch, 1, strings.Repeat("x", maxTarget+1), bind("GET", "/", netip.Addr{})); len(got) != 0 {
		t.Fatal("signed a mark for an over-long board name")
	}

	red := m.SignString(KindRedirect, 1, "b", &Binding{Method: "GET", Path: "/p", Query: "a=1&b=2"})
	r := httptest.NewRequest("GET", "/p?a=1&"+QueryMark+"="+red+"&b=2", nil)
	if _, err := m.Verify(r, nil, "b", true); err != nil {
		t.Fatalf("query mark: %v", err)
	}
	r = httptest.NewRequest("GET", "/p", nil)
	if _, err := m.Verify(r, nil, "b", false); err != ErrNoMark {
		t.Fatalf("no mark: %v", err)
	}
	r.Header.Set(HeaderMark, a)
	if _, err := m.Verify(r, nil, "b", false); err != nil {
		t.Fatalf("header mark: %v", err)
	}
	if got := stripQueryMark("a=1&" + QueryMark + "=x&b=2&" + QueryMark + "=y"); got != "a=1&b=2" {
		t.Fatalf("strip = %q", got)
	}
}

// bind is a Binding for a request without query or body.
func bind(method, path string, client netip.Addr) *Binding {
	return &Binding{Method: method, Path: path, Client: client}
}
