package rotate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// seededKey is an ed25519 key from a fixed seed: tests draw no
// randomness they cannot replay.
func seededKey(seed string) (ed25519.PublicKey, ed25519.PrivateKey) {
	priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat(seed, ed25519.SeedSize)[:ed25519.SeedSize]))
	return priv.Public().(ed25519.PublicKey), priv
}

// restoredState is a durable.State whose documents come from a raft
// snapshot (durable.FSM.Restore), as a board that catches up from one
// gets them; Apply is not needed here.
type restoredState struct{ fsm *durable.FSM }

func (s restoredState) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, errors.New("restoredState: read only")
}
func (s restoredState) Get(kind string) durable.Document            { return s.fsm.Get(kind) }
func (s restoredState) Watch(kind string, f func(durable.Document)) { s.fsm.Watch(kind, f) }
func (s restoredState) Status() durable.Status                      { return durable.Status{} }
func (s restoredState) Guard(kind string, g durable.Guard)          { s.fsm.Guard(kind, g) }
func (s restoredState) Authorize(kind string, a durable.Authorizer) { s.fsm.Authorize(kind, a) }

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

// restore gives fsm a snapshot holding sealed as the rotation document at
// version 7: the snapshot format is the FSM's own (an empty one, with the
// document added).
func restore(t *testing.T, fsm *durable.FSM, sealed []byte) {
	t.Helper()
	snap, err := durable.NewFSM(nil).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(sink.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	docs, _ := json.Marshal(map[string]durable.Document{durable.KindRotation: {Version: 7, Data: sealed}})
	s["docs"] = docs
	b, _ := json.Marshal(s)
	if err := fsm.Restore(io.NopCloser(bytes.NewReader(b))); err != nil {
		t.Fatal(err)
	}
}

// TestLogRefusesForgedRotation: a holder of any card (the store's secret
// seals, the forward route writes) put a rotation in the log with a
// thief's key, generation 2^64-1 and phase done, and every board took it:
// the roller checked the admin's signature on Start and Offer only. Now
// every document a board takes, from a committed entry, a restored
// snapshot or an offer, is the admin's and of a rotation's generation;
// one that is not is refused and logged, and the board keeps its secrets
// (keyring, marks, the kept file).
func TestLogRefusesForgedRotation(t *testing.T) {
	admin, adminKey := seededKey("admin")
	_, thief := seededKey("thief")
	sec := Secrets{Key: k2, Session: []byte("stolen session secret")}
	docs := []struct {
		name string
		doc  Doc
		err  string
	}{
		{"a thief's key, generation 2^64-1, phase done",
			Doc{Gen: math.MaxUint64, Phase: Done, Key: sec.Key, Session: sec.Session, Sig: ed25519.Sign(thief, Signed(math.MaxUint64, sec.Key, sec.Session))},
			"not signed by the admin"},
		{"no signature", Doc{Gen: 1, Phase: Done, Key: sec.Key, Session: sec.Session}, "not signed by the admin"},
		{"the admin's signature of another generation",
			Doc{Gen: 2, Phase: Install, Key: sec.Key, Session: sec.Session, Sig: ed25519.Sign(adminKey, Signed(1, sec.Key, sec.Session))},
			"not signed by the admin"},
		{"signed, and wrapping: generation 2^64-1",
			Doc{Gen: math.MaxUint64, Phase: Done, Key: sec.Key, Session: sec.Session, Sig: ed25519.Sign(adminKey, Signed(math.MaxUint64, sec.Key, sec.Session))},
			"generation 18446744073709551615"},
		{"signed, past the last generation a bundle holds",
			Doc{Gen: MaxGen + 1, Phase: Done, Key: sec.Key, Session: sec.Session, Sig: ed25519.Sign(adminKey, Signed(MaxGen+1, sec.Key, sec.Session))},
			"generation 9223372036854775808"},
	}
	// the ways a document reaches a board: an entry committed now (the
	// log's guard refuses it on every board), a snapshot restored (the
	// same), a log written before the guard existed (the roller refuses
	// what it would take), another board's offer
	paths := []string{"a committed entry", "a restored snapshot", "a log written before this check", "an offer"}
	for _, tt := range docs {
		for _, path := range paths {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				ctx := context.Background()
				var logged bytes.Buffer
				alone := durable.NewAlone(nil)
				var st durable.State = alone
				fsm := durable.NewFSM(nil)
				if path == "a restored snapshot" {
					st = restoredState{fsm}
				}
				sealed, err := Seal(store, tt.doc)
				if err != nil {
					t.Fatal(err)
				}
				if path == "a log written before this check" {
					if _, err := alone.Apply(ctx, durable.KindRotation, sealed, 0); err != nil {
						t.Fatal(err)
					}
				}
				kr := newFakeKeyring(k0)
				installs := 0
				file := filepath.Join(t.TempDir(), "secrets.json")
				start := Saved{Phase: Done, Key: k0, Session: []byte("s0"), Store: store}
				r := New(Options{Self: "ews1", State: st, Saved: start, Path: file, Keyring: kr, Verify: admin,
					Install: func(Secrets, []Secrets) { installs++ },
					Log:     slog.New(slog.NewTextHandler(&logged, nil))})
				switch path {
				case "a committed entry":
					_, err := st.Apply(ctx, durable.KindRotation, sealed, 0)
					if !durable.IsRefused(err) || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("the log took it: %v, want refused saying %q", err, tt.err)
					}
				case "a restored snapshot":
					restore(t, fsm, sealed)
				case "an offer":
					if changed, err := r.Offer(sealed); changed || err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("offered: changed %v, %v; want refused saying %q", changed, err, tt.err)
					}
				}
				if path != "a log written before this check" {
					if v := st.Get(durable.KindRotation).Version; v != 0 {
						t.Errorf("the log holds it: version %d", v)
					}
				}
				r.step(ctx)
				r.step(ctx)
				if got := r.Saved(); got.Gen != 0 || !bytes.Equal(got.Key, k0) || got.Phase != Done {
					t.Errorf("the board took it: generation %d, key %s, phase %s", got.Gen, got.Key, got.Phase)
				}
				if kr.state() != string(k0) || len(kr.ops) != 0 || installs != 1 {
					t.Errorf("keyring %s (ops %v), secrets installed %d times; want only the card's, once", kr.state(), kr.ops, installs)
				}
				if _, err := os.Stat(file); !os.IsNotExist(err) {
					t.Errorf("the forged secrets were kept at %s (%v)", file, err)
				}
				if s := r.Status(); s.Gen != 0 || s.Phase != "" {
					t.Errorf("status shows the forged rotation: generation %d, phase %s", s.Gen, s.Phase)
				}
				if path == "a log written before this check" {
					if n := strings.Count(logged.String(), "refused"); n != 1 || !strings.Contains(logged.String(), tt.err) {
						t.Errorf("logged %d refusals, want 1 saying %q:\n%s", n, tt.err, logged.String())
					}
				}
			})
		}
	}
}

// TestStartReplacesARefusedDocument: a forged document in a log written
// before the guard does not stop the admin's next rotation, which takes the generation after
// the board's own (not after the forged one) and rolls.
func TestStartReplacesARefusedDocument(t *testing.T) {
	ctx := context.Background()
	admin, adminKey := seededKey("admin")
	_, thief := seededKey("thief")
	log := durable.NewAlone(nil)
	forged, _ := Seal(store, Doc{Gen: math.MaxUint64, Phase: Done, Key: k2, Session: []byte("s2"), Sig: ed25519.Sign(thief, Signed(math.MaxUint64, k2, []byte("s2")))})
	if _, err := log.Apply(ctx, durable.KindRotation, forged, 0); err != nil { // a log written before the guard
		t.Fatal(err)
	}
	kr := newFakeKeyring(k0)
	r := New(Options{Self: "ews1", State: log, Saved: Saved{Phase: Done, Key: k0, Session: []byte("s0"), Store: store},
		Keyring: kr, Verify: admin, Log: slog.New(slog.DiscardHandler)})
	r.step(ctx)
	s1 := Secrets{Key: k1, Session: []byte("s1")}
	if _, err := r.Start(ctx, s1, "admin", 1, ed25519.Sign(adminKey, Signed(1, s1.Key, s1.Session))); err != nil {
		t.Fatalf("the admin's rotation over a forged document: %v", err)
	}
	for i := 0; i < 10 && !r.Status().Finished; i++ {
		r.step(ctx)
	}
	if got := r.Saved(); got.Gen != 1 || got.Phase != Done || kr.state() != string(k1) {
		t.Fatalf("after the admin's rotation: generation %d phase %s keyring %s; want 1, done, %s", got.Gen, got.Phase, kr.state(), k1)
	}
}

// TestStartRefusesToWrap: a board at the last generation (the old code
// took 2^64-1 from a forged document) started generation 2^63, which no
// bundle holds, or wrapped to 0 and never rolled; now it refuses, and the
// log is not written.
func TestStartRefusesToWrap(t *testing.T) {
	admin, adminKey := seededKey("admin")
	s := Secrets{Key: k1, Session: []byte("s1")}
	tests := []struct {
		name   string
		at     uint64
		verify ed25519.PublicKey
		gen    uint64
	}{
		{"at the last generation, the next unsigned", MaxGen, nil, 0},
		{"at the last generation, the next signed", MaxGen, admin, MaxGen + 1},
		{"at 2^64-1, wrapping to 0", math.MaxUint64, nil, 0},
		{"at 2^64-1, signed for 0", math.MaxUint64, admin, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := durable.NewAlone(nil)
			r := New(Options{Self: "ews1", State: log, Saved: Saved{Gen: tt.at, Phase: Done, Key: k0, Session: []byte("s0"), Store: store},
				Verify: tt.verify, Log: slog.New(slog.DiscardHandler)})
			_, err := r.Start(context.Background(), s, "admin", tt.gen, ed25519.Sign(adminKey, Signed(tt.gen, s.Key, s.Session)))
			if !errors.Is(err, ErrLastGeneration) {
				t.Fatalf("Start: %v, want ErrLastGeneration", err)
			}
			if v := log.Get(durable.KindRotation).Version; v != 0 {
				t.Fatalf("the log was written (version %d)", v)
			}
		})
	}
}
