package hal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// counter is a test device that counts what reaches it: each read returns
// the number of reads so far, so callers that shared one read see the same
// value. An action waits on hold (when set) until the test closes it.
type counter struct {
	reads, acts atomic.Int64
	running     atomic.Int64 // operations inside Do now
	peak        atomic.Int64
	hold        chan struct{}
	// readTime, when set, is how long each read takes on the devices'
	// fake clock: the next read's time is popped from it (the last stays).
	mu       sync.Mutex
	clock    *testutil.Clock
	readTime []time.Duration
}

// slow makes c's reads take these times on clock, one per read.
func (c *counter) slow(clock *testutil.Clock, times ...time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock, c.readTime = clock, times
}

var counters sync.Map // device name -> *counter

func (c *counter) Do(ctx context.Context, a Action) (Reading, error) {
	n := c.running.Add(1)
	defer c.running.Add(-1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	if a.Kind == Read {
		c.mu.Lock()
		if c.clock != nil && len(c.readTime) > 0 {
			c.clock.Add(c.readTime[0])
			if len(c.readTime) > 1 {
				c.readTime = c.readTime[1:]
			}
		}
		c.mu.Unlock()
		return Reading{State: StateOK, Value: float64(c.reads.Add(1))}, nil
	}
	c.acts.Add(1)
	if c.hold != nil {
		<-c.hold
	}
	return Reading{State: StateOn, Value: true}, nil
}

func (c *counter) Close() error { return nil }

func init() {
	open := func(e *Env) (Instance, Reading, error) {
		c := &counter{}
		if e.Spec.Units == "hold" {
			c.hold = make(chan struct{})
		}
		counters.Store(e.Spec.Name, c)
		return c, Reading{State: StateUnknown}, nil
	}
	Register(Driver{Name: "test-counter", Open: open, Actions: []Kind{Read, TurnOn}, Polled: true, Simulated: true})
	Register(Driver{Name: "test-counter2", Open: open, Actions: []Kind{Read, TurnOn}, Simulated: true, Concurrency: 2})
}

func counterOf(t testing.TB, name string) *counter {
	t.Helper()
	c, ok := counters.Load(name)
	if !ok {
		t.Fatalf("no counter device %q", name)
	}
	return c.(*counter)
}

// concurrently runs n calls of do at once and returns their results.
func concurrently(n int, do func() (Snapshot, error)) ([]Snapshot, []error) {
	snaps, errs := make([]Snapshot, n), make([]error, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range n {
		wg.Go(func() {
			start.Wait()
			snaps[i], errs[i] = do()
		})
	}
	start.Done()
	wg.Wait()
	return snaps, errs
}

// Concurrent reads of one device share one device read (docs/DESIGN.md "Data
// flow"): 20 concurrent reads of one 50 ms sensor share
// device reads; every caller gets a reading the device gave.
func TestConcurrentReadsShareOneRead(t *testing.T) {
	cfg := parse(t, "[[device]]\nname = \"temp-share\"\ndriver = \"test-counter\"\n")
	cfg.Sim.DeviceLatency = 50 * time.Millisecond
	ds := open(t, cfg, NewSimBoard())
	c := counterOf(t, "temp-share")
	start := time.Now()
	snaps, errs := concurrently(20, func() (Snapshot, error) {
		return ds.Do(context.Background(), "temp-share", Action{Kind: Read})
	})
	took := time.Since(start)
	reads := c.reads.Load()
	if reads >= 20 || reads < 1 {
		t.Fatalf("the device was read %d times for 20 concurrent reads, want 1..19", reads)
	}
	for i, s := range snaps {
		v, ok := s.Value.(float64)
		if errs[i] != nil || s.State != StateOK || !ok || v < 1 || v > float64(reads) {
			t.Fatalf("read %d: %+v, %v; want one of the device's %d readings", i, s, errs[i], reads)
		}
	}
	t.Logf("20 concurrent reads of a 50 ms sensor: %d device reads, %v", reads, took)
}

func TestMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name, maxAge string
		later        time.Duration // second read this long after the first
		cached       bool
	}{
		{"young reading", "1s", 500 * time.Millisecond, true},
		{"reading too old", "1s", 1500 * time.Millisecond, false},
		{"zero is always fresh", "0s", 0, false},
		{"default: a share of a read time under the floor", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "age-" + map[bool]string{true: "y", false: "n"}[tc.cached] + tc.maxAge + tc.later.String()
			spec := "[[device]]\nname = \"" + name + "\"\ndriver = \"test-counter\"\n"
			if tc.maxAge != "" {
				spec += "max_age = \"" + tc.maxAge + "\"\n"
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			ds, err := New(parse(t, spec), Options{Board: NewSimBoard(), Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ds.Close() })
			first := do(t, ds, name, Action{Kind: Read})
			mu.Lock()
			now = now.Add(tc.later)
			mu.Unlock()
			second := do(t, ds, name, Action{Kind: Read})
			reads := counterOf(t, name).reads.Load()
			if second.Cached != tc.cached || first.Cached {
				t.Fatalf("cached: first %v, second %v; want false, %v", first.Cached, second.Cached, tc.cached)
			}
			if want := map[bool]int64{true: 1, false: 2}[tc.cached]; reads != want {
				t.Fatalf("device read %d times, want %d", reads, want)
			}
			if tc.cached && (!second.Updated.Equal(first.Updated) || second.Value != first.Value) {
				t.Fatalf("cached answer %+v is not the first reading %+v", second, first)
			}
			if s, _ := ds.Get(name); s.Cached {
				t.Fatal("the device's own snapshot is marked cached")
			}
		})
	}
}

// The default max_age is a share of the device's own fastest read time,
// measured on the devices' clock: a fake one here, so the test does not
// depend on how fast this machine is.
func TestMaxAgeDefaultShare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readTimes []time.Duration // the device's reads, in order, on the fake clock
		after     time.Duration   // the next read this long after the last reading
		cached    bool
	}{
		{"young for a 40 ms device", []time.Duration{40 * time.Millisecond}, 9 * time.Millisecond, true},
		{"too old for a 40 ms device", []time.Duration{40 * time.Millisecond}, 11 * time.Millisecond, false},
		{"a device under the floor is always read", []time.Duration{DefaultMaxAgeFloor / 2}, 0, false},
		// a first read slowed by a loaded machine (400 ms) does not make a
		// 40 ms device answer from a cache for 100 ms: its fastest read counts
		{"the fastest read counts", []time.Duration{400 * time.Millisecond, 40 * time.Millisecond, 400 * time.Millisecond}, 20 * time.Millisecond, false},
		{"a µs device slowed once stays fresh", []time.Duration{80 * time.Millisecond, 10 * time.Microsecond}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "share-" + strings.ReplaceAll(tc.name, " ", "-")
			clock := newFakeClock()
			ds, err := New(parse(t, "[[device]]\nname = \""+name+"\"\ndriver = \"test-counter\"\n"), Options{Board: NewSimBoard(), Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ds.Close() })
			c := counterOf(t, name)
			c.slow(clock, tc.readTimes...)
			for i := range tc.readTimes {
				if s := do(t, ds, name, Action{Kind: Read}); s.Cached {
					t.Fatalf("read %d of %v was cached", i, tc.readTimes)
				}
				clock.Add(time.Hour) // apart: each read reaches the device
			}
			clock.Add(-time.Hour + tc.after)
			if s := do(t, ds, name, Action{Kind: Read}); s.Cached != tc.cached {
				t.Fatalf("reads of %v, then one %v later: cached %v, want %v", tc.readTimes, tc.after, s.Cached, tc.cached)
			}
		})
	}
}

func TestActionsNeverShare(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"act-share\"\ndriver = \"test-counter\"\nmax_age = \"1h\"\n"), NewSimBoard())
	_, errs := concurrently(5, func() (Snapshot, error) {
		return ds.Do(context.Background(), "act-share", Action{Kind: TurnOn})
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := counterOf(t, "act-share").acts.Load(); n != 5 {
		t.Fatalf("5 actions reached the device %d times, want 5", n)
	}
}

// A read whose first caller gives up while the device is busy is read by
// the callers still waiting, not failed with the first caller's error.
func TestSharedReadOutlivesItsFirstCaller(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"held\"\ndriver = \"test-counter\"\nunits = \"hold\"\nmax_age = \"0s\"\n"), NewSimBoard())
	c := counterOf(t, "held")
	acted := make(chan error, 1)
	go func() { _, err := ds.Do(context.Background(), "held", Action{Kind: TurnOn}); acted <- err }()
	testutil.Eventually(t, "the action holds the device", func() bool { return c.running.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := ds.Do(ctx, "held", Action{Kind: Read}); first <- err }()
	d := ds.devices().local["held"]
	testutil.Eventually(t, "a read flight waits", func() bool { d.reads.mu.Lock(); defer d.reads.mu.Unlock(); return d.reads.flight != nil })
	second := make(chan Snapshot, 1)
	go func() { s, _ := ds.Do(context.Background(), "held", Action{Kind: Read}); second <- s }()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller: %v, want canceled", err)
	}
	close(c.hold)
	if err := <-acted; err != nil {
		t.Fatal(err)
	}
	if s := <-second; s.State != StateOK || s.Value != 1.0 {
		t.Fatalf("second caller got %+v, want the device's first reading", s)
	}
}

func TestDriverConcurrency(t *testing.T) {
	ds := open(t, parse(t, "[[device]]\nname = \"two\"\ndriver = \"test-counter2\"\nunits = \"hold\"\n\n[[device]]\nname = \"one\"\ndriver = \"test-counter\"\nunits = \"hold\"\n"), NewSimBoard())
	for _, tc := range []struct {
		name string
		want int64
	}{{"two", 2}, {"one", 1}} {
		c := counterOf(t, tc.name)
		done := make(chan struct{})
		go func() {
			defer close(done)
			concurrently(3, func() (Snapshot, error) { return ds.Do(context.Background(), tc.name, Action{Kind: TurnOn}) })
		}()
		testutil.Eventually(t, "actions running", func() bool { return c.running.Load() == tc.want })
		close(c.hold)
		<-done
		if p := c.peak.Load(); p != tc.want {
			t.Errorf("%s: %d actions ran at once, want %d", tc.name, p, tc.want)
		}
	}
	if got := Concurrency(DeviceSpec{Driver: "test-counter2", Interlock: []string{"x"}}); got != 1 {
		t.Errorf("an interlocked device runs %d at once, want 1", got)
	}
}
