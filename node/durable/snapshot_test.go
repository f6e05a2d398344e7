package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// nameSigner signs as name with a fixed mark: the authorizer below stands
// for a real check of a person's key (node/users).
type nameSigner string

func (s nameSigner) Name() string           { return string(s) }
func (s nameSigner) Sign(msg []byte) []byte { return append([]byte("sig:"+string(s)+":"), msg...) }

// onlyAdmin takes a version after the first only when "admin" signed it.
func onlyAdmin(cur Document, w Write) error {
	if cur.Version == 0 && !w.Snapshot {
		return nil
	}
	if w.By != "admin" || !bytes.Equal(w.Sig, nameSigner("admin").Sign(w.Signed())) {
		return fmt.Errorf("not the admin's (by %q)", w.By)
	}
	return nil
}

func snapshotOf(t *testing.T, docs map[string]Document) []byte {
	t.Helper()
	b, err := json.Marshal(snapshotDocs{V: commandVersion, Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A snapshot's documents are checked like entries (issue 50: a stolen
// voter card that wins an election installed a forged users store by
// snapshot): each changed document's last write must be signed as its
// authorizer wants, no document goes back or changes at its version, and
// one refusal refuses the whole snapshot.
func TestRestoreVetsSnapshot(t *testing.T) {
	admin := func(v uint64, data string) Document {
		w := Write{Kind: KindUsers, Data: []byte(data), Expect: v - 1}
		return Document{Version: v, Data: []byte(data), By: "admin", Sig: nameSigner("admin").Sign(w.Signed())}
	}
	mine := map[string]Document{KindUsers: admin(3, "three"), KindConfig: {Version: 2, Data: []byte("cfg")}}
	for _, c := range []struct {
		name string
		docs map[string]Document
		ok   bool
	}{
		{"signed by the admin, newer", map[string]Document{KindUsers: admin(9, "nine"), KindConfig: mine[KindConfig]}, true},
		{"the same versions", mine, true},
		{"forged by a card", map[string]Document{KindUsers: {Version: 9, Data: []byte("mallory"), By: "mallory", Sig: []byte("x")}, KindConfig: mine[KindConfig]}, false},
		{"unsigned", map[string]Document{KindUsers: {Version: 9, Data: []byte("mallory")}, KindConfig: mine[KindConfig]}, false},
		{"the admin's signature moved to other data", map[string]Document{KindUsers: {Version: 9, Data: []byte("mallory"), By: "admin", Sig: admin(9, "nine").Sig}, KindConfig: mine[KindConfig]}, false},
		{"the admin's signature moved to another version", map[string]Document{KindUsers: {Version: 10, Data: []byte("nine"), By: "admin", Sig: admin(9, "nine").Sig}, KindConfig: mine[KindConfig]}, false},
		{"back to an older version", map[string]Document{KindUsers: admin(2, "two"), KindConfig: mine[KindConfig]}, false},
		{"changed at the same version", map[string]Document{KindUsers: mine[KindUsers], KindConfig: {Version: 2, Data: []byte("other")}}, false},
		{"a document left out", map[string]Document{KindUsers: admin(9, "nine")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := NewFSM(testutil.Logger())
			f.Authorize(KindUsers, onlyAdmin)
			var told []string
			f.Watch(KindUsers, func(d Document) { told = append(told, string(d.Data)) })
			f.docs = map[string]Document{KindUsers: mine[KindUsers], KindConfig: mine[KindConfig]}
			err := f.Restore(io.NopCloser(bytes.NewReader(snapshotOf(t, c.docs))))
			if c.ok {
				if err != nil || f.Get(KindUsers).Version != c.docs[KindUsers].Version || len(told) != 1 {
					t.Fatalf("restore: %v, users %+v, told %v", err, f.Get(KindUsers), told)
				}
				return
			}
			if !errors.Is(err, ErrSnapshotRefused) {
				t.Fatalf("restore: %v, want refused", err)
			}
			if d := f.Get(KindUsers); d.Version != 3 || string(d.Data) != "three" || f.Get(KindConfig).Version != 2 || len(told) != 0 {
				t.Errorf("after the refusal: users %+v, config %+v, told %v", d, f.Get(KindConfig), told)
			}
		})
	}
}

// A board starting from its own snapshot (an empty FSM) takes it, but for
// a document its guard refuses.
func TestRestoreOwnAtStart(t *testing.T) {
	f := NewFSM(testutil.Logger())
	f.Authorize(KindUsers, onlyAdmin)
	f.Guard(KindConfig, func(_ Document, data []byte) error {
		if string(data) == "forged" {
			return errors.New("no")
		}
		return nil
	})
	snap := snapshotOf(t, map[string]Document{KindUsers: {Version: 4, Data: []byte("x")}, KindConfig: {Version: 2, Data: []byte("forged")}})
	if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil || f.Get(KindUsers).Version != 4 || f.Get(KindConfig).Version != 0 {
		t.Fatalf("restore: %v, users %+v, config %+v", err, f.Get(KindUsers), f.Get(KindConfig))
	}
}

// The store refuses to keep a refused snapshot, so the next start does not
// restore it into an empty FSM; the board's own snapshots are kept.
func TestVetStoreKeepsNoForgedSnapshot(t *testing.T) {
	f := NewFSM(testutil.Logger())
	f.Authorize(KindUsers, onlyAdmin)
	f.docs = map[string]Document{KindUsers: {Version: 3, Data: []byte("three")}}
	files, err := raft.NewFileSnapshotStoreWithLogger(t.TempDir(), 2, newHCLog(testutil.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	store := vetStore{SnapshotStore: files, fsm: f}
	sink, err := store.Create(raft.SnapshotVersionMax, 100, 9, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(snapshotOf(t, map[string]Document{KindUsers: {Version: 9, Data: []byte("mallory"), By: "mallory"}})); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); !errors.Is(err, ErrSnapshotRefused) {
		t.Fatalf("close: %v, want refused", err)
	}
	if metas, _ := store.List(); len(metas) != 0 {
		t.Errorf("the refused snapshot was kept: %+v", metas)
	}
	// this board's own snapshot, though older than its documents by now
	snap, _ := f.Snapshot()
	f.docs[KindUsers] = Document{Version: 4, Data: []byte("four")}
	if sink, err = store.Create(raft.SnapshotVersionMax, 50, 9, raft.Configuration{}, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	if metas, _ := store.List(); len(metas) != 1 || metas[0].Index != 50 {
		t.Errorf("the board's own snapshot: %+v", metas)
	}
}

// The attack end to end over raft: a voter's stolen card claims a newer
// term and sends a follower a snapshot with its own users store. The
// follower answers no success, keeps the admin's store and still follows
// the real leader's next write.
func TestForgedSnapshotRefusedOverRaft(t *testing.T) {
	c := newTestClusterPrep(t, testTiming, func(r *Raft) { r.Authorize(KindUsers, onlyAdmin) }, "ews1", "ews2", "ews3")
	lead := c.leader(c.names...)
	sign := func(data string) {
		t.Helper()
		testutil.WaitFor(t, "the admin writes "+data, 10*time.Second, func() (bool, string) {
			r := c.board(lead)
			cur := r.Get(KindUsers)
			if string(cur.Data) == data {
				return true, ""
			}
			_, err := r.Apply(WithSigner(context.Background(), nameSigner("admin")), KindUsers, []byte(data), cur.Version)
			return err == nil, fmt.Sprint(err)
		})
	}
	sign("one")
	sign("two")
	c.agree("two")
	var victim string
	for _, n := range c.names {
		if n != lead {
			victim = n
		}
	}
	st := c.board(victim).r.Load().Stats()
	var term uint64
	fmt.Sscan(st["term"], &term)
	_, thief := raft.NewInmemTransport("thief")
	thief.Connect(raft.ServerAddress(victim), c.trans[victim])
	data := snapshotOf(t, map[string]Document{KindUsers: {Version: 50, Data: []byte("mallory is admin"), By: "mallory", Sig: []byte("x")}})
	conf := raft.Configuration{Servers: []raft.Server{{ID: "ews1", Address: "ews1"}, {ID: "ews2", Address: "ews2"}, {ID: "ews3", Address: "ews3"}}}
	req := &raft.InstallSnapshotRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("ews9"), Addr: []byte("thief")}, SnapshotVersion: raft.SnapshotVersionMax,
		Term: term + 5, Leader: []byte("thief"), LastLogIndex: 10_000, LastLogTerm: term + 5,
		Configuration: raft.EncodeConfiguration(conf), ConfigurationIndex: 1, Size: int64(len(data))}
	var resp raft.InstallSnapshotResponse
	err := thief.InstallSnapshot("ews9", raft.ServerAddress(victim), req, &resp, bytes.NewReader(data))
	t.Logf("install: %v %+v", err, resp)
	if err == nil && resp.Success {
		t.Fatal("the forged snapshot was installed")
	}
	if d := c.board(victim).Get(KindUsers); string(d.Data) != "two" {
		t.Fatalf("the victim's users store: %+v", d)
	}
	c.leader(c.names...)
	sign("three")
	c.agree("three")
}
