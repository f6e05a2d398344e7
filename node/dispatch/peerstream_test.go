package dispatch

import (
	"errors"
	"net/http"
	"testing"
)

// A peer mark opens the stream it was signed for, on the board it names,
// once; anything else is refused.
func TestPeerMark(t *testing.T) {
	key := RandomKey()
	m, err := NewMarker(key, MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewMarker(RandomKey(), MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := func(url string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	signed := func(signer *Marker, url, target string) *http.Request {
		r := req(url)
		signer.SignPeer(r, target)
		return r
	}
	const local = "http://ews2/events?scope=local"
	replayed := signed(m, local, "ews2")
	if err := m.VerifyPeer(replayed, "ews2"); err != nil {
		t.Fatalf("a good mark: %v", err)
	}
	moved := req("http://ews2/events?scope=log")
	moved.Header = signed(m, local, "ews2").Header
	for _, tc := range []struct {
		name string
		r    *http.Request
		want string // refusal reason; "" = ErrNoMark
	}{
		{"none", req(local), ""},
		{"replayed", replayed, RefuseReplayed},
		{"another board", signed(m, local, "ews3"), RefuseTarget},
		{"another cluster", signed(other, local, "ews2"), RefuseSignature},
		{"another path", moved, RefusePath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.VerifyPeer(tc.r, "ews2")
			var me *MarkError
			switch {
			case tc.want == "" && err != ErrNoMark:
				t.Fatalf("got %v, want ErrNoMark", err)
			case tc.want != "" && (!errors.As(err, &me) || me.Reason != tc.want):
				t.Fatalf("got %v, want refusal %q", err, tc.want)
			}
		})
	}
}
