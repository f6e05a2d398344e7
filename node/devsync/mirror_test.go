package devsync

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// recorder collects OnChange calls.
type recorder struct {
	mu   sync.Mutex
	got  []hal.Snapshot
	sent chan hal.Snapshot // when non-nil, each call is also sent here (never blocks)
}

func (r *recorder) OnChange(s hal.Snapshot) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	if r.sent != nil {
		select {
		case r.sent <- s:
		default:
		}
	}
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.got {
		out = append(out, s.Name+"="+s.State)
	}
	return out
}

func (r *recorder) reset() { r.mu.Lock(); r.got = nil; r.mu.Unlock() }

func snap(name, node, state string, at time.Time) hal.Snapshot {
	return hal.Snapshot{Name: name, Driver: "sim-switch", Node: node, State: state, Value: state == hal.StateOn, Updated: at}
}

func TestReplaceUpdateAndTrust(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &recorder{}
	m := New("ews1", nil, Options{OnChange: rec.OnChange})

	ignored := m.replace("ews2", []hal.Snapshot{
		snap("r2", "ews2", hal.StateOff, t0),
		snap("r3", "ews3", hal.StateOn, t0), // ews2 may not speak for ews3
		snap("bus", "any", hal.StateOn, t0),
		snap("", "ews2", hal.StateOn, t0), // no name
	})
	if ignored != 2 {
		t.Fatalf("ignored %d, want 2", ignored)
	}
	if got, want := rec.names(), []string{"r2=off", "bus=on"}; !slices.Equal(got, want) {
		t.Fatalf("OnChange %v, want %v", got, want)
	}
	if _, ok := m.Get("r3"); ok {
		t.Fatal("r3 mirrored from ews2")
	}
	rec.reset()

	// same snapshot again: nothing changed, nothing told
	m.replace("ews2", []hal.Snapshot{snap("r2", "ews2", hal.StateOff, t0), snap("bus", "any", hal.StateOn, t0)})
	if got := rec.names(); len(got) != 0 {
		t.Fatalf("OnChange %v for an unchanged snapshot", got)
	}
	if m.update("ews2", snap("r3", "ews3", hal.StateOff, t0)) {
		t.Fatal("update accepted r3 from ews2")
	}
	if !m.update("ews2", snap("r2", "ews2", hal.StateOn, t0.Add(time.Second))) {
		t.Fatal("update refused r2 from ews2")
	}
	if s, _ := m.Get("r2"); s.State != hal.StateOn {
		t.Fatalf("r2 = %s, want on", s.State)
	}
	// a newer copy of a shared device from another board wins
	m.update("ews3", snap("bus", "any", hal.StateOff, t0.Add(time.Minute)))
	if s, _ := m.Get("bus"); s.State != hal.StateOff {
		t.Fatalf("bus = %s, want the newer off", s.State)
	}
	if got, want := names(m.List()), []string{"bus", "r2"}; !slices.Equal(got, want) {
		t.Fatalf("List %v, want %v", got, want)
	}
}

func names(list []hal.Snapshot) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := New("ews1", nil, Options{})
	m.replace("ews2", []hal.Snapshot{snap("r2", "ews2", hal.StateOn, t0), snap("bus", "any", hal.StateOn, t0.Add(time.Hour))})
	m.replace("ews3", []hal.Snapshot{snap("r3", "ews3", hal.StateOff, t0), snap("old", "any", hal.StateOn, t0)})
	m.replace("ews4", []hal.Snapshot{snap("r5", "ews4", hal.StateOn, t0)}) // config says r5 is on ews3

	remote := func(name, node string) hal.Snapshot {
		return hal.Snapshot{Name: name, Driver: "sim-switch", Node: node, State: hal.StateRemote}
	}
	local := []hal.Snapshot{
		remote("r3", "ews3"),
		snap("r1", "ews1", hal.StateOff, t0),
		remote("r2", "ews2"),
		remote("r5", "ews3"),
		remote("r9", "ews9"), // never heard of
		snap("bus", "any", hal.StateOff, t0),
		snap("old", "any", hal.StateOff, t0.Add(time.Hour)), // ours is newer
	}
	before := slices.Clone(local)
	got := m.Merge(local)
	want := []string{"r3=off", "r1=off", "r2=on", "r5=remote", "r9=remote", "bus=on", "old=off"}
	var gotS []string
	for _, s := range got {
		gotS = append(gotS, s.Name+"="+s.State)
	}
	if !slices.Equal(gotS, want) {
		t.Fatalf("Merge = %v, want %v", gotS, want)
	}
	for i := range local {
		if !equal(local[i], before[i]) {
			t.Fatalf("Merge modified local[%d]", i)
		}
	}
}

func TestStaleAfterGrace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testutil.NewClock(t0)
	rec := &recorder{}
	m := New("ews1", nil, Options{Grace: 3 * time.Second, Now: clk.Now, OnChange: rec.OnChange})
	m.setUp("ews2", true, "")
	m.replace("ews2", []hal.Snapshot{snap("r2", "ews2", hal.StateOn, t0), snap("bus", "any", hal.StateOn, t0)})
	rec.reset()

	m.setUp("ews2", false, "connection refused")
	clk.Add(2 * time.Second)
	m.markStale()
	if s, _ := m.Get("r2"); s.State != hal.StateOn || len(rec.names()) != 0 {
		t.Fatalf("stale before the grace ended: %+v %v", s, rec.names())
	}
	clk.Add(2 * time.Second)
	m.markStale()
	s, _ := m.Get("r2")
	if s.State != hal.StateError || s.Error != "board ews2 unreachable" || s.Value != true || !s.Updated.Equal(t0) {
		t.Fatalf("after grace r2 = %+v, want error, last value and time kept", s)
	}
	if got, want := rec.names(), []string{"r2=error"}; !slices.Equal(got, want) {
		t.Fatalf("OnChange %v, want %v", got, want)
	}
	if _, ok := m.Get("bus"); ok {
		t.Fatal("shared device of an unreachable board still mirrored")
	}
	m.markStale()
	if len(rec.names()) != 1 {
		t.Fatalf("stale mark told twice: %v", rec.names())
	}
	rec.reset()

	// back: the same value clears the mark and is told
	m.setUp("ews2", true, "")
	m.replace("ews2", []hal.Snapshot{snap("r2", "ews2", hal.StateOn, t0), snap("r4", "ews2", hal.StateOff, t0)})
	if s, _ := m.Get("r2"); s.State != hal.StateOn || s.Error != "" {
		t.Fatalf("after reconnect r2 = %+v", s)
	}
	if got, want := rec.names(), []string{"r2=on", "r4=off"}; !slices.Equal(got, want) {
		t.Fatalf("OnChange %v, want %v", got, want)
	}

	// down again: marked again; one device reported alone clears only its mark
	m.setUp("ews2", false, "reset")
	clk.Add(4 * time.Second)
	m.markStale()
	if state(m, "r2") != hal.StateError || state(m, "r4") != hal.StateError {
		t.Fatalf("second down period: r2 %s r4 %s, want both error", state(m, "r2"), state(m, "r4"))
	}
	m.update("ews2", snap("r4", "ews2", hal.StateOff, t0))
	if state(m, "r2") != hal.StateError || state(m, "r4") != hal.StateOff {
		t.Fatalf("after one device event: r2 %s r4 %s, want error and off", state(m, "r2"), state(m, "r4"))
	}
}

func TestOnChangePanicIsContained(t *testing.T) {
	m := New("ews1", nil, Options{OnChange: func(hal.Snapshot) { panic("boom") }})
	if !m.update("ews2", snap("r2", "ews2", hal.StateOn, time.Now())) {
		t.Fatal("update refused")
	}
	if s, ok := m.Get("r2"); !ok || s.State != hal.StateOn {
		t.Fatalf("r2 = %+v %v after a panicking OnChange", s, ok)
	}
}

// A board that went down after a healthy stream is warned stale; one whose
// stream keeps breaking before it is healthy (its "lost" was logged once)
// goes stale at debug level, or every backoff past Grace would warn again.
func TestStaleLogLevel(t *testing.T) {
	tests := []struct {
		name     string
		flapping bool
		want     string
	}{
		{"lost after a healthy stream", false, "WARN devsync: board devices stale"},
		{"flapping", true, "DEBUG devsync: board devices stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := testutil.NewClock(t0)
			logs := &capture{}
			m := New("ews1", nil, Options{Grace: 3 * time.Second, Now: clk.Now, Logger: slog.New(logs)})
			m.setUp("ews2", true, "")
			m.replace("ews2", []hal.Snapshot{snap("r2", "ews2", hal.StateOn, t0)})
			m.setDown("ews2", "devsync: board closed the stream", tt.flapping)
			clk.Add(4 * time.Second)
			m.markStale()
			if state(m, "r2") != hal.StateError {
				t.Fatalf("r2 %s after the grace, want error", state(m, "r2"))
			}
			if got := logs.msgs; !slices.Equal(got, []string{tt.want}) {
				t.Fatalf("logs %v, want [%s]", got, tt.want)
			}
		})
	}
}
