package state

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ews-firmware/ews/node/config"
)

// TestMeasureIdle prints the idle cost of a 3-board cluster with the
// default timings: gossip bytes/s per board and CPU share of one core for
// the whole process (3 boards). A measurement, not a check: it runs only
// with EWS_MEASURE=1 (go test -run TestMeasureIdle ./state/ with it set).
func TestMeasureIdle(t *testing.T) {
	if os.Getenv("EWS_MEASURE") == "" {
		t.Skip("set EWS_MEASURE=1 to measure")
	}
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("ews%d=127.0.0.1:%d", i+1, freePort(t)))
	}
	var bs []*board
	for i := range 3 {
		cfg := testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)
		def := config.DefaultConfig()
		cfg.Cluster.Heartbeat, cfg.Cluster.TMax, cfg.Cluster.TThreshold = def.Cluster.Heartbeat, def.Cluster.TMax, def.Cluster.TThreshold
		bs = append(bs, startBoard(t, cfg))
	}
	waitFor(t, "ews1 elected", 10*time.Second, func() bool { return oneMaster(bs, "ews1") })
	const span = 10 * time.Second
	wire0, ours0 := make([]float64, 3), make([]float64, 3)
	for i, b := range bs {
		wire0[i], ours0[i] = testutil.ToFloat64(b.c.m.wire), testutil.ToFloat64(b.c.m.bytes.WithLabelValues("sent"))
	}
	cpu0 := cpuTime()
	start := time.Now()
	time.Sleep(span) // measuring an interval, not waiting for a condition
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	for i, b := range bs {
		wire := (testutil.ToFloat64(b.c.m.wire) - wire0[i]) / el.Seconds()
		ours := (testutil.ToFloat64(b.c.m.bytes.WithLabelValues("sent")) - ours0[i]) / el.Seconds()
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
