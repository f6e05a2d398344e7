package rotate

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// TestGuard: what the log takes as the next rotation document on every
// board. Before it, any board (or any card, through the forward route)
// could write any document the store's secret seals: an older generation
// replayed, a phase put back, another generation's secrets.
func TestGuard(t *testing.T) {
	admin, adminKey := seededKey("admin")
	_, thief := seededKey("thief")
	sec := map[uint64]Secrets{1: {k1, []byte("s1")}, 2: {k2, []byte("s2")}, 3: {[]byte("key-generation-3"), []byte("s3")}}
	doc := func(gen uint64, p Phase) Doc {
		s := sec[gen]
		return Doc{Gen: gen, Phase: p, Key: s.Key, Session: s.Session, Sig: ed25519.Sign(adminKey, Signed(gen, s.Key, s.Session))}
	}
	seal := func(d Doc) []byte {
		b, err := Seal(store, d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	forged := Doc{Gen: 5, Phase: Done, Key: k2, Session: []byte("s2"), Sig: ed25519.Sign(thief, Signed(5, k2, []byte("s2")))}
	otherSecrets := doc(1, Use)
	otherSecrets.Key, otherSecrets.Sig = k2, ed25519.Sign(adminKey, Signed(1, k2, otherSecrets.Session))
	tests := []struct {
		name     string
		cur      *Doc // nil: no document yet
		curBytes []byte
		next     []byte
		err      string // "" taken
	}{
		{"the first rotation", nil, nil, seal(doc(1, Install)), ""},
		{"an ack or the next phase", ptr(doc(1, Install)), nil, seal(doc(1, Use)), ""},
		{"the same phase again (an ack)", ptr(doc(1, Use)), nil, seal(doc(1, Use)), ""},
		{"the next rotation once done", ptr(doc(1, Done)), nil, seal(doc(2, Install)), ""},
		{"a document the admin did not sign", ptr(doc(1, Done)), nil, seal(forged), "not signed by the admin"},
		{"the phase put back", ptr(doc(1, Use)), nil, seal(doc(1, Install)), "back from phase use"},
		{"another generation's secrets", ptr(doc(1, Install)), nil, seal(otherSecrets), "other secrets"},
		{"the next rotation while one rolls", ptr(doc(1, Use)), nil, seal(doc(2, Install)), "still rolling"},
		{"the next rotation done at once", ptr(doc(1, Done)), nil, seal(doc(2, Done)), "starts in phase done"},
		{"a generation skipped", ptr(doc(1, Done)), nil, seal(doc(3, Install)), "want 1 or 2"},
		{"an older rotation replayed", ptr(doc(2, Done)), nil, seal(doc(1, Done)), "want 2 or 3"},
		{"not sealed under the store's secret", nil, nil, []byte("not a sealed document at all, but long enough"), "does not open"},
		{"a forged document in the log is replaced by the admin's", &forged, nil, seal(doc(1, Install)), ""},
		{"junk in the log is replaced by the admin's", nil, []byte("junk written before the guard, long enough"), seal(doc(1, Install)), ""},
	}
	g := Guard(store, admin)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cur durable.Document
			if tt.cur != nil {
				cur = durable.Document{Version: 3, Data: seal(*tt.cur)}
			}
			if tt.curBytes != nil {
				cur = durable.Document{Version: 3, Data: tt.curBytes}
			}
			err := g(cur, tt.next)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("%v, want refused saying %q", err, tt.err)
			}
		})
	}
}

func ptr(d Doc) *Doc { return &d }
