package state

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// panickyLoad is a Local whose load sampling panics, as procfs's ARM
// cpuinfo parser did under qemu-user.
type panickyLoad struct{ fakeLocal }

func (*panickyLoad) Load() Load {
	var fields []string
	return Load{CPU: float64(len(fields[1]))} // index out of range [1] with length 0
}

// countWarns counts the records logged at Warn and above that mention sub.
type countWarns struct {
	sub string
	n   atomic.Int64
}

func (c *countWarns) Enabled(context.Context, slog.Level) bool { return true }
func (c *countWarns) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *countWarns) WithGroup(string) slog.Handler            { return c }
func (c *countWarns) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, c.sub) {
		c.n.Add(1)
	}
	return nil
}

// A board whose load cannot be sampled still reports itself running (no
// load), and says so once, not every heartbeat.
func TestReportSurvivesPanickingLoad(t *testing.T) {
	cfg := testConfig("ews1", []string{"ews1=127.0.0.1:1"}, testKey)
	log := &countWarns{sub: "load"}
	c, err := New(cfg, slog.New(log), nil, &panickyLoad{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		r := c.report()
		if r.Runstate != Running || r.FullLoad() != (Load{}) || r.Capacity != uint32(cfg.Capacity) {
			t.Fatalf("report %+v, want running with capacity %d and no load", r, cfg.Capacity)
		}
	}
	if n := log.n.Load(); n != 1 {
		t.Fatalf("%d warnings over 5 reports, want 1", n)
	}
}
