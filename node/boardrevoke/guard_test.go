package boardrevoke

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// The list's guard (issue 50): a revoked card wrote `revocations = []` and
// was let in again, and could revoke every other board.
func TestGuard(t *testing.T) {
	pub, admin, err := ed25519.GenerateKey(strings.NewReader(strings.Repeat("admin key seed 0123456789abcdef!", 2)))
	if err != nil {
		t.Fatal(err)
	}
	_, thief, _ := ed25519.GenerateKey(strings.NewReader(strings.Repeat("a thief's seed 0123456789abcdef!", 2)))
	at := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	signed := func(key ed25519.PrivateKey, board string) Entry {
		e := Entry{Board: board, By: "admin", At: at}
		e.Sig = Sign(key, e)
		return e
	}
	doc := func(es ...Entry) []byte {
		b, _ := json.Marshal(Doc{Boards: es})
		return b
	}
	peers := []string{"ews1", "ews2", "ews3"}
	cur3 := durable.Document{Version: 1, Data: doc(signed(admin, "ews3"))}
	tests := []struct {
		name string
		pub  ed25519.PublicKey
		cur  durable.Document
		next []byte
		want string // "" passes
	}{
		{"the admin revokes", pub, durable.Document{}, doc(signed(admin, "ews3")), ""},
		{"unsigned", pub, durable.Document{}, doc(Entry{Board: "ews3", At: at}), "not signed"},
		{"a thief's key", pub, durable.Document{}, doc(signed(thief, "ews3")), "not signed"},
		{"the list emptied", pub, cur3, doc(), `drop board "ews3"`},
		{"a majority", pub, cur3, doc(signed(admin, "ews3"), signed(admin, "ews2")), "majority"},
		{"not a board", pub, durable.Document{}, doc(signed(admin, "ews9")), "not a board"},
		{"kept entries need no new signature", pub, durable.Document{Version: 1, Data: doc(Entry{Board: "ews3"})}, doc(Entry{Board: "ews3"}), ""},
		{"no admin key: the token was the proof", nil, durable.Document{}, doc(Entry{Board: "ews3", At: at}), ""},
		{"no admin key still never shrinks", nil, cur3, doc(), "drop"},
		{"not JSON", pub, durable.Document{}, []byte("{"), "new list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Guard(tt.pub, peers)(tt.cur, tt.next)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// Through the log: a refused list never becomes the document, on any
// board, and the writer is told.
func TestGuardInTheLog(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(strings.NewReader(strings.Repeat("admin key seed 0123456789abcdef!", 2)))
	st := durable.NewAlone(nil)
	st.Guard(durable.KindRevocations, Guard(pub, []string{"ews1", "ews2", "ews3"}))
	l := New(st, nil)
	_, err := l.Add(t.Context(), Entry{Board: "ews2", By: "ews3's card", At: time.Now()})
	if !durable.IsRefused(err) {
		t.Fatalf("an unsigned revocation: %v, want refused", err)
	}
	if l.Revoked("ews2") || st.Get(durable.KindRevocations).Version != 0 {
		t.Errorf("the refused entry was taken: %v", l.Entries())
	}
}
