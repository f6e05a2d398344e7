package state

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestMeasureIdle prints the idle cost of a 3-board cluster with the
// default timings: gossip bytes/s per board and CPU share of one core for
// the whole process (3 boards). A measurement, not a check: it runs only
// with EWS_MEASURE=1 (go test -run TestMeasureIdle ./state/ with it set).
func TestMeasureIdle(t *testing.T) {
	if os.Getenv("EWS_MEASURE") == "" {
		t.Skip("set EWS_MEASURE=1 to measure")
	}
	peers := loopbackPeers(t, 3)
	var bs []*board
	for i := range 3 {
		cfg := testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)
		def := DefaultConfig()
		cfg.Heartbeat, cfg.TMax, cfg.TThreshold = def.Heartbeat, def.TMax, def.TThreshold
		bs = append(bs, startBoard(t, cfg))
	}
	testutil.EventuallyWithin(t, "ews1 elected", 10*time.Second, func() bool { return oneMaster(bs, "ews1") })
	const span = 10 * time.Second
	wire0, ours0 := make([]float64, 3), make([]float64, 3)
	for i, b := range bs {
		wire0[i], ours0[i] = float64(b.c.m.wire.Get()), float64(b.c.m.bytes.WithLabelValues("sent").Get())
	}
	cpu0 := cpuTime()
	start := time.Now()
	time.Sleep(span) // measuring an interval, not waiting for a condition
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	for i, b := range bs {
		wire := (float64(b.c.m.wire.Get()) - wire0[i]) / el.Seconds()
		ours := (float64(b.c.m.bytes.WithLabelValues("sent").Get()) - ours0[i]) / el.Seconds()
		t.Logf("%s (master=%v): %.0f B/s on the wire (memberlist included), %.0f B/s of tables+reports before encryption",
			b.c.self.Name, b.c.IsMaster(), wire, ours)
	}
	t.Logf("CPU for 3 boards: %.2f%% of one core (%.2f%% per board)", 100*cpu.Seconds()/el.Seconds(), 100*cpu.Seconds()/el.Seconds()/3)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMeasureTakeover crashes the master of a 3-board cluster 20 times per
// timing and prints p50 and max of the time from the crash until both
// survivors agree on one new master. Runs only with EWS_MEASURE=1.
func TestMeasureTakeover(t *testing.T) {
	if os.Getenv("EWS_MEASURE") == "" {
		t.Skip("set EWS_MEASURE=1 to measure")
	}
	for _, tm := range []struct{ hb, tmax, tth time.Duration }{
		{100 * time.Millisecond, time.Second, 500 * time.Millisecond},
		{100 * time.Millisecond, 300 * time.Millisecond, 250 * time.Millisecond},
	} {
		peers := loopbackPeers(t, 3)
		conf := func(i int) Config {
			cfg := testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)
			cfg.Heartbeat, cfg.TMax, cfg.TThreshold = tm.hb, tm.tmax, tm.tth
			return cfg
		}
		bs := make([]*board, 3)
		for i := range bs {
			bs[i] = startBoard(t, conf(i))
		}
		testutil.EventuallyWithin(t, "first master", 10*time.Second, func() bool { return oneMaster(bs, "ews1") })
		var times []time.Duration
		for range 20 {
			m := masterIndex(bs)
			live := slices.Delete(slices.Clone(bs), m, m+1)
			start := time.Now()
			bs[m].c.crash()
			testutil.EventuallyWithin(t, "new master", 10*tm.tmax, func() bool {
				name, _, _ := live[0].c.Master()
				return name != bs[m].c.self.Name && oneMaster(live, name)
			})
			times = append(times, time.Since(start))
			bs[m] = startBoard(t, conf(m))
			name, _, _ := live[0].c.Master()
			testutil.EventuallyWithin(t, "restarted board follows", 10*time.Second, func() bool { return oneMaster(bs, name) })
			testutil.EventuallyWithin(t, "all running", 10*time.Second, func() bool {
				for _, n := range bs[m].c.Snapshot().Nodes {
					if n.Runstate != Running {
						return false
					}
				}
				return true
			})
		}
		slices.Sort(times)
		t.Logf("heartbeat %v tmax %v: takeover over %d crashes: p50 %v, max %v (goal tmax + 2 heartbeats = %v)",
			tm.hb, tm.tmax, len(times), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond), tm.tmax+2*tm.hb)
		for _, b := range bs {
			b.c.stop()
		}
	}
}
