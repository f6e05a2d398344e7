package rotate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/durable"
)

// fakeKeyring behaves as memberlist.Keyring does: UseKey of a key not
// installed and RemoveKey of the primary are errors.
type fakeKeyring struct {
	keys [][]byte // keys[0] is the primary
	ops  []string
}

func newFakeKeyring(primary []byte, more ...[]byte) *fakeKeyring {
	return &fakeKeyring{keys: append([][]byte{primary}, more...)}
}

func (k *fakeKeyring) has(key []byte) bool {
	return slices.ContainsFunc(k.keys, func(x []byte) bool { return bytes.Equal(x, key) })
}

func (k *fakeKeyring) AddKey(key []byte) error {
	k.ops = append(k.ops, "add "+string(key))
	if !k.has(key) {
		k.keys = append(k.keys, key)
	}
	return nil
}

func (k *fakeKeyring) UseKey(key []byte) error {
	k.ops = append(k.ops, "use "+string(key))
	i := slices.IndexFunc(k.keys, func(x []byte) bool { return bytes.Equal(x, key) })
	if i < 0 {
		return errors.New("requested key is not in the keyring")
	}
	k.keys[0], k.keys[i] = k.keys[i], k.keys[0]
	return nil
}

func (k *fakeKeyring) RemoveKey(key []byte) error {
	k.ops = append(k.ops, "remove "+string(key))
	if bytes.Equal(k.keys[0], key) {
		return errors.New("removing the primary key is not allowed")
	}
	k.keys = slices.DeleteFunc(k.keys, func(x []byte) bool { return bytes.Equal(x, key) })
	return nil
}

func (k *fakeKeyring) state() string {
	var s []string
	for _, x := range k.keys {
		s = append(s, string(x))
	}
	return strings.Join(s, ",")
}

// Keys in these tests are readable strings of 16 bytes.
var (
	k0    = []byte("key-generation-0")
	k1    = []byte("key-generation-1")
	k2    = []byte("key-generation-2")
	store = []byte("the store secret, never rotated")
)

func TestTake(t *testing.T) {
	start := Saved{Gen: 0, Phase: Done, Key: k0, Session: []byte("s0"), Store: store}
	doc := func(gen uint64, p Phase, key []byte) Doc {
		return Doc{Gen: gen, Phase: p, Key: key, Session: []byte("s" + string(key[len(key)-1]))}
	}
	tests := []struct {
		name    string
		docs    []Doc
		ring    string // the keyring after them, primary first
		primary string // the key marks are signed with
		also    int    // keys further accepted
		ops     string
	}{
		{"install", []Doc{doc(1, Install, k1)}, "key-generation-0,key-generation-1", "key-generation-0", 1,
			"add key-generation-1"},
		{"install then use", []Doc{doc(1, Install, k1), doc(1, Use, k1)}, "key-generation-1,key-generation-0", "key-generation-1", 1,
			"add key-generation-1 use key-generation-1"},
		{"the whole roll", []Doc{doc(1, Install, k1), doc(1, Use, k1), doc(1, Done, k1)}, "key-generation-1", "key-generation-1", 0,
			"add key-generation-1 use key-generation-1 remove key-generation-0"},
		{"a missed board takes done at once", []Doc{doc(1, Done, k1)}, "key-generation-1", "key-generation-1", 0,
			"add key-generation-1 use key-generation-1 remove key-generation-0"},
		{"a phase seen twice is taken once", []Doc{doc(1, Install, k1), doc(1, Install, k1)}, "key-generation-0,key-generation-1", "key-generation-0", 1,
			"add key-generation-1"},
		{"an older generation changes nothing", []Doc{doc(1, Done, k1), doc(1, Use, k1), doc(0, Done, k0)}, "key-generation-1", "key-generation-1", 0,
			"add key-generation-1 use key-generation-1 remove key-generation-0"},
		{"two rotations missed", []Doc{doc(2, Done, k2)}, "key-generation-2", "key-generation-2", 0,
			"add key-generation-2 use key-generation-2 remove key-generation-0"},
		{"a later rotation finishes the one in use", []Doc{doc(1, Install, k1), doc(1, Use, k1), doc(2, Install, k2)}, "key-generation-1,key-generation-2", "key-generation-1", 1,
			"add key-generation-1 use key-generation-1 add key-generation-1 use key-generation-1 remove key-generation-0 add key-generation-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr := newFakeKeyring(k0)
			s := start
			for _, d := range tt.docs {
				next, ops, _ := Take(s, d)
				if err := Do(kr, ops); err != nil {
					t.Fatalf("doc %d %s: %v", d.Gen, d.Phase, err)
				}
				s = next
			}
			if got := kr.state(); got != tt.ring {
				t.Errorf("keyring %s, want %s", got, tt.ring)
			}
			primary, also := s.Keys()
			if string(primary.Key) != tt.primary || len(also) != tt.also {
				t.Errorf("marks under %s and %d more, want %s and %d", primary.Key, len(also), tt.primary, tt.also)
			}
			if got := strings.Join(kr.ops, " "); got != tt.ops {
				t.Errorf("ops %q, want %q", got, tt.ops)
			}
		})
	}
}

// board is one Roller of a test cluster.
type board struct {
	name string
	kr   *fakeKeyring
	r    *Roller
	prim Secrets
}

// TestRollThreeBoards rolls a rotation through three boards sharing one
// log (durable.Alone) and checks, after every step of every board, that no
// board encrypts with a key another live board cannot decrypt; a fourth
// board, down throughout, takes the finished rotation from a push.
func TestRollThreeBoards(t *testing.T) {
	ctx := context.Background()
	log := durable.NewAlone(nil)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sign := func(gen uint64, s Secrets) []byte { return ed25519.Sign(priv, Signed(gen, s.Key, s.Session)) }
	names := []string{"ews1", "ews2", "ews3"}
	live := func() []string { return names }
	var boards []*board
	dir := t.TempDir()
	for _, n := range append(names, "ews4") {
		b := &board{name: n, kr: newFakeKeyring(k0)}
		st := durable.State(log)
		if n == "ews4" {
			st = durable.NewAlone(nil) // down: sees nothing of the cluster's log
		}
		b.r = New(Options{Self: n, State: st, Saved: Saved{Phase: Done, Key: k0, Session: []byte("s0"), Store: store},
			Path: filepath.Join(dir, n+".secrets.json"), Keyring: b.kr, Live: live, Verify: pub,
			Install: func(p Secrets, _ []Secrets) { b.prim = p }})
		boards = append(boards, b)
	}
	s1, s2 := Secrets{Key: k1, Session: []byte("s1")}, Secrets{Key: k2, Session: []byte("s2")}
	if _, err := boards[1].r.Start(ctx, s1, "admin", 1, sign(2, s1)); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("a rotation signed for another generation: %v, want ErrUnsigned", err)
	}
	var stale *StaleError
	if _, err := boards[1].r.Start(ctx, s1, "admin", 2, sign(2, s1)); !errors.As(err, &stale) {
		t.Fatalf("a rotation for generation 2 while the next is 1: %v, want a StaleError", err)
	}
	if _, err := boards[1].r.Start(ctx, s1, "admin", 1, sign(1, s1)); err != nil {
		t.Fatal(err)
	}
	var rerr *RollingError
	if _, err := boards[0].r.Start(ctx, s2, "admin", 2, sign(2, s2)); !errors.As(err, &rerr) {
		t.Fatalf("a second rotation while the first rolls: %v, want a RollingError", err)
	}
	for round := 0; round < 20 && !boards[0].r.Status().Finished; round++ {
		for _, b := range boards[:3] {
			b.r.step(ctx)
			for _, enc := range boards[:3] {
				for _, dec := range boards[:3] {
					if !dec.kr.has(enc.kr.keys[0]) {
						t.Fatalf("round %d: %s encrypts with %s, which %s cannot decrypt (%s)", round, enc.name, enc.kr.keys[0], dec.name, dec.kr.state())
					}
				}
			}
		}
	}
	st := boards[0].r.Status()
	if !st.Finished || st.Gen != 1 {
		t.Fatalf("status %+v, want generation 1 finished", st)
	}
	for _, b := range boards[:3] {
		// once every board has taken Done, the old key is gone everywhere
		b.r.step(ctx)
		if got := b.kr.state(); got != string(k1) || !bytes.Equal(b.prim.Key, k1) {
			t.Errorf("%s: keyring %s, marks under %s; want only %s", b.name, got, b.prim.Key, k1)
		}
		kept, ok, err := Load(filepath.Join(dir, b.name+".secrets.json"))
		if err != nil || !ok || !bytes.Equal(kept.Key, k1) || kept.Phase != Done || !bytes.Equal(kept.Store, store) {
			t.Errorf("%s kept %+v %v %v", b.name, kept, ok, err)
		}
	}
	// ews4 was down: it is offered the document and takes it whole
	ews4 := boards[3]
	changed, err := ews4.r.Offer(log.Get(durable.KindRotation).Data)
	if err != nil || !changed || ews4.kr.state() != string(k1) {
		t.Fatalf("ews4 offered the rotation: changed %v, %v, keyring %s", changed, err, ews4.kr.state())
	}
	if changed, err := ews4.r.Offer(log.Get(durable.KindRotation).Data); err != nil || changed {
		t.Fatalf("offered again: changed %v %v, want nothing new", changed, err)
	}
	// another cluster's document does not open; one made up by a holder
	// of the store secret (any card) is not the admin's
	other, _ := Seal([]byte("another cluster's store secret"), Doc{Gen: 9, Phase: Done, Key: k2})
	if _, err := ews4.r.Offer(other); err == nil {
		t.Fatal("a document sealed under another store secret was taken")
	}
	forged, _ := Seal(store, Doc{Gen: 9, Phase: Done, Key: k2, Session: []byte("s2")})
	if _, err := ews4.r.Offer(forged); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("a document without the admin's signature: %v, want ErrUnsigned", err)
	}
	// the rotation is done: a new one may start
	if _, err := boards[2].r.Start(ctx, s2, "admin", 2, sign(2, s2)); err != nil {
		t.Fatalf("a rotation after the first is done: %v", err)
	}
}

// TestLoadRefusesCorrupt: a kept file that does not read stops the start,
// naming the file; a missing one is no error.
func TestLoadRefusesCorrupt(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text string
		ok         bool
		err        string
	}{
		{"missing", "", false, ""},
		{"not json", "{gen: 1", false, "corrupt"},
		{"no key", `{"gen":1,"phase":"done","store":"AAAA"}`, false, "corrupt"},
		{"unknown phase", `{"gen":1,"phase":"later","key":"AAAA","store":"AAAA"}`, false, "corrupt"},
		{"generation past the last (a forged rotation)", `{"gen":18446744073709551615,"phase":"done","key":"AAAA","store":"AAAA"}`, false, "past the last"},
		{"good", `{"gen":1,"phase":"done","key":"AAAA","store":"AAAA"}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			if tt.text != "" {
				testutil.WriteFile(t, path, []byte(tt.text), 0o600)
			}
			_, ok, err := Load(path)
			switch {
			case tt.err == "" && err != nil, ok != tt.ok:
				t.Fatalf("ok %v err %v, want ok %v", ok, err, tt.ok)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), path)):
				t.Fatalf("err %v, want one naming %s and saying %q", err, path, tt.err)
			}
		})
	}
}
