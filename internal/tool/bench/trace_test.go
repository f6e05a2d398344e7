package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// traceServer answers every request with marks a cluster would add: a
// read joined under way (/api/devices/s1/read) or its own operation
// (/api/devices/s2/read), a page with none below the board (/). Marks
// are set in the past so every stage is positive.
func traceServer(t *testing.T, asked *atomic.Int64) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !reqtrace.Asked(r) {
			return
		}
		asked.Add(1)
		now := time.Now().Add(-10 * time.Millisecond)
		at := func(d time.Duration) string { return fmt.Sprint(now.Add(d).UnixNano()) }
		h := w.Header()
		h.Add(reqtrace.Header, "enter="+at(0)+",placed="+at(time.Millisecond))
		switch r.URL.Path {
		case "/api/devices/s1/read":
			h.Add(reqtrace.Header, "run="+at(2*time.Millisecond)+",joined="+at(3*time.Millisecond)+",done="+at(5*time.Millisecond))
		case "/api/devices/s2/read":
			h.Add(reqtrace.Header, "free="+at(400*time.Microsecond))
			h.Add(reqtrace.Header, "run="+at(2*time.Millisecond)+",lock="+at(4*time.Millisecond)+",done="+at(7*time.Millisecond))
		default:
			h.Add(reqtrace.Header, "run="+at(2*time.Millisecond))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestTraceReportsStagesAndControl(t *testing.T) {
	var asked atomic.Int64
	s := traceServer(t, &asked)
	classes, err := ParseMix("s1=1:POST /api/devices/s1/read,s2=1:POST /api/devices/s2/read,browse=1:GET /")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{URL: s.URL, Classes: classes, Rate: 2000, Duration: time.Second, Max: 60, Seed: 3, Concurrency: 1, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() == 0 {
		t.Fatal("no request asked for its trace")
	}
	stages := func(c ClassReport) map[string]TraceStage {
		if c.Trace == nil {
			t.Fatalf("class %s: no trace", c.Name)
		}
		out := map[string]TraceStage{}
		for _, st := range c.Trace.Stages {
			out[st.Name] = st
		}
		return out
	}
	for _, c := range rep.Classes {
		st := stages(c)
		if c.Trace.Sent.P50 <= 0 || c.Trace.Sent.P50 > c.Latency.Max {
			t.Errorf("%s: sent_ms %+v beside latency %+v", c.Name, c.Trace.Sent, c.Latency)
		}
		if c.Trace.Traced != int(c.OK) || c.Trace.TailN == 0 {
			t.Errorf("%s: traced %d of %d ok, tail %d", c.Name, c.Trace.Traced, c.OK, c.Trace.TailN)
		}
		if q := st["queue"].Latency.P50; q < 0.99 || q > 1.01 {
			t.Errorf("%s: queue p50 %.3f ms, want 1", c.Name, q)
		}
		switch c.Name {
		case "s1":
			if _, ok := st["slot_wait"]; ok {
				t.Errorf("s1: a slot_wait without a free mark")
			}
			if c.Trace.Joined != c.Trace.Traced || st["shared"].Latency.P50 < 1.99 || st["shared"].Latency.P50 > 2.01 {
				t.Errorf("s1: joined %d, shared %+v; want all joined, 2 ms", c.Trace.Joined, st["shared"])
			}
		case "s2":
			if _, ok := st["shared"]; ok || st["device"].Latency.P50 < 2.99 || st["device"].Latency.P50 > 3.01 || st["device_wait"].Latency.P50 < 1.99 {
				t.Errorf("s2: stages %+v; want device 3 ms, device_wait 2 ms, no shared", st)
			}
			if dq, sw := st["device_queue"].Latency.P50, st["slot_wait"].Latency.P50; dq < 0.39 || dq > 0.41 || sw < 0.59 || sw > 0.61 {
				t.Errorf("s2: device_queue %.3f slot_wait %.3f ms, want 0.4 and 0.6", dq, sw)
			}
		case "browse":
			if _, ok := st["device"]; ok {
				t.Errorf("browse: a device stage %+v", st["device"])
			}
		}
	}
	if rep.Control == nil || rep.Control.OK != rep.Classes[0].OK+rep.Classes[1].OK || rep.Control.Weight < 0.66 || rep.Control.Weight > 0.67 {
		t.Fatalf("control = %+v, want s1 and s2 together", rep.Control)
	}
	if ct := rep.Control.Trace; ct == nil || ct.Traced != rep.Classes[0].Trace.Traced+rep.Classes[1].Trace.Traced || ct.Joined != rep.Classes[0].Trace.Joined {
		t.Errorf("control's trace %+v, want s1's and s2's together", ct)
	}
}

func TestNoTraceUnlessAsked(t *testing.T) {
	var asked atomic.Int64
	s := traceServer(t, &asked)
	classes, _ := ParseMix("browse=1:GET /x")
	rep, err := Run(context.Background(), Config{URL: s.URL, Classes: classes, Rate: 2000, Duration: time.Second, Max: 20, Seed: 3, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 0 || rep.Classes[0].Trace != nil || rep.Control != nil {
		t.Fatalf("asked %d, trace %+v, control %+v: want none", asked.Load(), rep.Classes[0].Trace, rep.Control)
	}
}
