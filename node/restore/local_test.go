package restore

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// fakeWatcher is a device set whose changes the test sends.
type fakeWatcher struct {
	mu   sync.Mutex
	list []hal.Snapshot
	ch   chan hal.Snapshot
}

func (f *fakeWatcher) Restorable() []hal.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hal.Snapshot(nil), f.list...)
}

func (f *fakeWatcher) Watch(ctx context.Context, fn func(hal.Snapshot)) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-f.ch:
			fn(s)
		}
	}
}

func (f *fakeWatcher) set(s hal.Snapshot) {
	f.mu.Lock()
	f.list = []hal.Snapshot{s}
	f.mu.Unlock()
	f.ch <- s
}

func TestKeepSavesCommandedOutputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outputs.json")
	w := &fakeWatcher{ch: make(chan hal.Snapshot), list: []hal.Snapshot{out("r1", "off", 0)}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); Keep(ctx, path, w, 5*time.Millisecond, false, slog.Default()) }()
	w.set(out("r1", "on", 7))
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := LoadLocal(path)
		if err == nil && len(got) == 1 && got[0].State == "on" && got[0].Seq == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("saved %v %v, want r1 on at 7", got, err)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	// a change right before the end is saved by the last write
	w.set(out("r1", "off", 8))
	cancel()
	<-done
	if got, _ := LoadLocal(path); len(got) != 1 || got[0].Seq != 8 {
		t.Errorf("after the end: %v, want r1 at 8", got)
	}
}

func TestLocalFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "outputs.json")
	if l, err := LoadLocal(p); l != nil || err != nil {
		t.Fatalf("missing: %v %v", l, err)
	}
	if l, err := LoadLocal(""); l != nil || err != nil {
		t.Fatalf("off: %v %v", l, err)
	}
	if err := SaveLocal(p, []hal.Snapshot{out("r1", "on", 3)}); err != nil {
		t.Fatal(err)
	}
	if l, err := LoadLocal(p); err != nil || len(l) != 1 || l[0].Seq != 3 {
		t.Fatalf("round trip: %v %v", l, err)
	}
	os.WriteFile(p, []byte(`[{"name":"r1"`), 0o644) // cut by a power loss mid-write without rename
	if _, err := LoadLocal(p); err == nil {
		t.Error("a damaged file is taken")
	}
	if _, err := os.Stat(p + ".tmp"); err == nil {
		t.Error("temp file left behind")
	}
}

// TestRunLocalWins: the board's own saved command is newer than what a
// peer remembers (it ran while the peer could not hear it): it wins.
func TestRunLocalWins(t *testing.T) {
	devs := &fakeDevices{own: []hal.Snapshot{out("r1", "off", 0)}}
	res := Run(context.Background(), Options{
		Self: "ews2", Devices: devs, Poll: time.Millisecond,
		Peers: func() []string { return []string{"ews1"} }, Master: func() string { return "ews1" },
		Offers: func() map[string][]hal.Snapshot { return map[string][]hal.Snapshot{"ews1": {out("r1", "on", 5)}} },
		Local:  []hal.Snapshot{out("r1", "off", 6)},
	})
	if len(res.Restored) != 1 || res.Restored[0].Board != LocalBoard || res.Restored[0].From.State != "off" {
		t.Errorf("restored %+v, want r1 off from local", res.Restored)
	}
}

// A command that ran before Keep's Watch subscribed (a toggle right at
// start, then a clean stop) is saved all the same: Keep compares what it
// saved with the outputs' seqs, not only the changes it was told of.
func TestKeepSavesACommandItWasNotToldOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outputs.json")
	w := &fakeWatcher{ch: make(chan hal.Snapshot), list: []hal.Snapshot{out("r1", "on", 9)}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before any tick and with no change told
	Keep(ctx, path, w, time.Hour, false, slog.Default())
	if got, err := LoadLocal(path); err != nil || len(got) != 1 || got[0].Seq != 9 {
		t.Fatalf("saved %v %v, want r1 at 9", got, err)
	}
}
