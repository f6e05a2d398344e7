package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestScaleLoopback is TestScale with real Clusters on loopback (UDP,
// AES-GCM, memberlist's probes) at 8 and 32 boards, default timings: the
// master's wire bytes/s at idle, the time a change of one board's
// in-flight count takes to show in every board's view, and takeovers
// after a crash. A measurement: only with EWS_SCALE=1.
//
//	EWS_SCALE=1 go test -count=1 -run TestScaleLoopback -v ./state
func TestScaleLoopback(t *testing.T) {
	if os.Getenv("EWS_SCALE") == "" {
		t.Skip("a measurement: set EWS_SCALE=1")
	}
	var out strings.Builder
	out.WriteString("| boards | master wire bytes/s at idle | change reaches every board p50 / p99 (20) | takeover p50 / max (3) |\n|---|---|---|---|\n")
	for _, n := range []int{8, 32} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		peers := loopbackPeers(t, n)
		conf := func(i int) Config {
			cfg := testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)
			def := DefaultConfig()
			cfg.Heartbeat, cfg.TMax, cfg.TThreshold = def.Heartbeat, def.TMax, def.TThreshold
			return cfg
		}
		bs := make([]*board, n)
		for i := range bs {
			bs[i] = startBoard(t, conf(i))
		}
		testutil.EventuallyWithin(t, "ews1 elected", 30*time.Second, func() bool { return oneMaster(bs, "ews1") })

		w0, start := float64(bs[0].c.m.wire.Get()), time.Now()
		time.Sleep(5 * time.Second) // measuring an interval, not waiting for a condition
		idle := (float64(bs[0].c.m.wire.Get()) - w0) / time.Since(start).Seconds()

		var reach []time.Duration
		for k := range 20 {
			b := bs[1+rng.IntN(n-1)]
			want := k%3 + 1
			b.local.inflight.Store(int64(want))
			reach = append(reach, testutil.EventuallyWithin(t, "the change everywhere", 10*time.Second, func() bool { return seenEverywhere(bs, b.c.self.Name, want) }))
			b.local.inflight.Store(0)
			testutil.EventuallyWithin(t, "back to 0", 10*time.Second, func() bool { return seenEverywhere(bs, b.c.self.Name, 0) })
		}
		slices.Sort(reach)

		var takeovers []time.Duration
		for range 3 {
			m := masterIndex(bs)
			live := slices.Delete(slices.Clone(bs), m, m+1)
			bs[m].c.crash()
			took := testutil.EventuallyWithin(t, "a new master", 10*time.Second, func() bool {
				name, _, _ := live[0].c.Master()
				return name != bs[m].c.self.Name && oneMaster(live, name)
			})
			takeovers = append(takeovers, took)
			bs[m] = startBoard(t, conf(m))
			name, _, _ := live[0].c.Master()
			testutil.EventuallyWithin(t, "the restarted board follows", 30*time.Second, func() bool { return oneMaster(bs, name) })
		}
		slices.Sort(takeovers)
		fmt.Fprintf(&out, "| %d | %.1f KB/s | %v / %v | %v / %v |\n", n, idle/1000,
			reach[len(reach)/2].Round(time.Millisecond), reach[len(reach)*99/100].Round(time.Millisecond),
			takeovers[1].Round(time.Millisecond), takeovers[2].Round(time.Millisecond))
		for _, b := range bs {
			b.c.stop()
		}
	}
	t.Log("\n" + out.String())
}

// seenEverywhere reports whether every board's view has board at linknum.
func seenEverywhere(bs []*board, board string, linknum int) bool {
	for _, b := range bs {
		n, ok := b.c.Snapshot().Node(board)
		if !ok || n.Linknum != linknum {
			return false
		}
	}
	return true
}
