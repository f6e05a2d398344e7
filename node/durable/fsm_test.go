package durable

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/raft"
)

func entry(t *testing.T, index uint64, kind, data string, expect uint64) *raft.Log {
	t.Helper()
	b, err := encodeCommand(context.Background(), kind, []byte(data), expect)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: b}
}

// The FSM takes a write only at the version it was built from: a second
// writer that read the same version gets a conflict naming where the
// document is, and no document moves but the one named.
func TestFSMApply(t *testing.T) {
	f := NewFSM(testutil.Logger())
	var seen []string
	f.Watch(KindUsers, func(d Document) { seen = append(seen, string(d.Data)) })
	cases := []struct {
		kind, data string
		expect     uint64
		want       uint64 // new version; 0: refused
		conflict   uint64 // Have of the conflict
	}{
		{KindUsers, "a", 0, 1, 0},
		{KindUsers, "b", 1, 2, 0},
		{KindUsers, "stale", 1, 0, 2},
		{KindConfig, "c", 0, 1, 0},
		{KindConfig, "ahead", 5, 0, 1},
	}
	for i, c := range cases {
		r := f.Apply(entry(t, uint64(i+1), c.kind, c.data, c.expect)).(applyResult)
		if r.version != c.want {
			t.Errorf("case %d: version %d, want %d (err %v)", i, r.version, c.want, r.err)
		}
		var ce *ConflictError
		if c.want == 0 && (!errors.As(r.err, &ce) || ce.Have != c.conflict) {
			t.Errorf("case %d: err %v, want a conflict at %d", i, r.err, c.conflict)
		}
	}
	if d := f.Get(KindUsers); d.Version != 2 || string(d.Data) != "b" {
		t.Errorf("users = %d %q, want 2 \"b\"", d.Version, d.Data)
	}
	if got := f.Get(KindRevocations); got.Version != 0 {
		t.Errorf("revocations never written: version %d", got.Version)
	}
	if want := []string{"a", "b"}; !equal(seen, want) {
		t.Errorf("watcher saw %q, want %q", seen, want)
	}
	if f.Index() != uint64(len(cases)) {
		t.Errorf("index %d, want %d: a refused entry is applied too", f.Index(), len(cases))
	}
}

// An entry this build cannot read is skipped, not applied half.
func TestFSMBadEntry(t *testing.T) {
	f := NewFSM(testutil.Logger())
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte(`{"v":9,"kind":"users"}`)}).(applyResult)
	if r.err == nil || f.Get(KindUsers).Version != 0 || f.Index() != 1 {
		t.Fatalf("entry of version 9: err %v, users %d, index %d", r.err, f.Get(KindUsers).Version, f.Index())
	}
}

// A snapshot restores every document at its version, and tells watchers.
func TestFSMSnapshotRestore(t *testing.T) {
	f := NewFSM(testutil.Logger())
	f.Apply(entry(t, 1, KindUsers, "u", 0))
	f.Apply(entry(t, 2, KindConfig, "c", 0))
	f.Apply(entry(t, 3, KindConfig, "c2", 1))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	g := NewFSM(testutil.Logger())
	var told Document
	g.Watch(KindConfig, func(d Document) { told = d })
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KindUsers, KindConfig} {
		if a, b := f.Get(k), g.Get(k); a.Version != b.Version || !bytes.Equal(a.Data, b.Data) {
			t.Errorf("%s: restored %d %q, want %d %q", k, b.Version, b.Data, a.Version, a.Data)
		}
	}
	if told.Version != 2 || string(told.Data) != "c2" {
		t.Errorf("config watcher told %d %q after restore", told.Version, told.Data)
	}
}

// WaitIndex returns once the index is applied, or with the context.
func TestFSMWaitIndex(t *testing.T) {
	f := NewFSM(testutil.Logger())
	done := make(chan error, 1)
	go func() { done <- f.WaitIndex(context.Background(), 2) }()
	f.Apply(entry(t, 1, KindUsers, "a", 0))
	f.Apply(entry(t, 2, KindUsers, "b", 1))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitIndex(2) did not return after index 2")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.WaitIndex(ctx, 3); err == nil {
		t.Fatal("WaitIndex(3) with a cancelled context returned nil")
	}
}

// A board alone commits at once, through the same FSM.
func TestAlone(t *testing.T) {
	a := NewAlone(testutil.Logger())
	v, err := a.Apply(context.Background(), KindUsers, []byte("a"), 0)
	if err != nil || v != 1 {
		t.Fatalf("Apply = %d, %v", v, err)
	}
	if _, err := a.Apply(context.Background(), KindUsers, []byte("b"), 0); err == nil {
		t.Fatal("a stale write was taken")
	}
	if st := a.Status(); st.State != "alone" || st.Documents[KindUsers] != 1 {
		t.Fatalf("status %+v", st)
	}
}

type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
