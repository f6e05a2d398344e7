package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

// paperCluster writes and starts the paper's setup: 3 simulated boards,
// capacity 2, 20 ms per device operation and per page, with policy.
func paperCluster(t *testing.T, policy string) []*board {
	t.Helper()
	boards := boardTOML{node: "capacity = 2\n", cluster: "tmax = \"1s\"\nheartbeat = \"100ms\"\n", rest: fmt.Sprintf(`[sched]
policy = %q
[http]
auth = "none"
max_conns_per_client = 4096 # the load comes from one address; at 1.5x on a busy machine it holds more than the default 256 open
[sim]
device_latency = "20ms"
page_latency = "20ms"
[[device]]
name = "s1"
driver = "sim-sensor"
node = "any"
max_age = "0s" # every control request reads the device: no answer shared at the entry (the scheduler is what is measured)
[[device]]
name = "led1"
driver = "sim-pwm"
node = "ews2"
[[device]]
name = "led2"
driver = "sim-pwm"
node = "ews3"
`, policy)}.startCluster(t, 3)
	waitAgree(t, "ews1 master of 3 running boards", 20*time.Second, boards, "ews1", 1)
	return boards
}

// load offers rate req/s for d through url with 25% control requests.
func load(t *testing.T, url string, rate float64, d time.Duration) *bench.Report {
	t.Helper()
	classes, err := bench.ParseMix("control=0.25:POST /api/devices/s1/read,browse=0.75:GET /")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), bench.Config{URL: url, Classes: classes, Rate: rate, Duration: d, Seed: 7, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func class(rep *bench.Report, name string) bench.ClassReport {
	for _, c := range rep.Classes {
		if c.Name == name {
			return c
		}
	}
	return bench.ClassReport{}
}

// TestDispatchPriority is the paper's claim on real processes: at 1.5x the
// cluster's capacity with 25% control requests, priority-lc serves every
// control request near its service time while browse requests are shed;
// with plain lc (one FIFO) control waits behind pages and is shed with them. Bounds are generous:
// the measured figures go to docs/BENCHMARKS.md.
func TestDispatchPriority(t *testing.T) {
	long(t, "starts real ews processes under load")
	const capacity = 3 * 2 / 0.020 // 300 requests/s
	loss := map[string]float64{}
	for _, policy := range []string{"priority-lc", "lc"} {
		t.Run(policy, func(t *testing.T) {
			boards := paperCluster(t, policy)
			rep := load(t, "http://"+boards[0].http, 1.5*capacity, 3*time.Second)
			c, b := class(rep, "control"), class(rep, "browse")
			t.Logf("%s at 1.5x: control sent %d ok %d shed %d p50 %.1fms p99 %.1fms; browse ok %d shed %d p99 %.1fms shed-p99 %.1fms",
				policy, c.Sent, c.OK, c.Shed, c.Latency.P50, c.Latency.P99, b.OK, b.Shed, b.Latency.P99, b.ShedLatency.P99)
			if c.Sent == 0 || b.Sent == 0 {
				t.Fatalf("no load offered: %+v", rep.Total)
			}
			if got := c.Sent + b.Sent; got != c.OK+c.Shed+c.Errors+b.OK+b.Shed+b.Errors {
				t.Fatalf("requests not answered exactly once: sent %d", got)
			}
			if c.Errors+b.Errors > 0 {
				t.Fatalf("errors: %v %v", c.ErrorSamples, b.ErrorSamples)
			}
			loss[policy] = 1 - float64(c.OK)/float64(c.Sent)
			if policy == "priority-lc" {
				// What the priority queue guarantees whatever the machine's
				// speed: under overload browse is shed before control, so
				// control loses a clearly smaller share than browse. (An
				// absolute share or a p99 bound is a timed assertion: under two
				// busy loops it measured the machine, 89.7 % served against a
				// 90 % bound. The figures go to docs/BENCHMARKS.md.)
				ctlLoss := 1 - float64(c.OK)/float64(c.Sent)
				browseLoss := 1 - float64(b.OK)/float64(b.Sent)
				if ctlLoss > browseLoss/2 {
					t.Errorf("priority-lc lost %.0f%% of control and %.0f%% of browse; want control to lose less than half browse's share", 100*ctlLoss, 100*browseLoss)
				}
				if b.Shed == 0 {
					t.Errorf("no browse request shed at 1.5x capacity")
				}
			}
		})
	}
	// Latency comparisons are noisy on a shared machine; what cannot be
	// noise is that plain lc loses control requests that priority-lc serves.
	if loss["lc"] < loss["priority-lc"]+0.05 {
		t.Errorf("control lost: lc %.0f%%, priority-lc %.0f%%; want lc to lose clearly more", 100*loss["lc"], 100*loss["priority-lc"])
	}
}

// TestNonMasterSameAnswer: a client on any board gets what the master gives.
func TestNonMasterSameAnswer(t *testing.T) {
	beside(t, "starts real ews processes")
	boards := paperCluster(t, "priority-lc")
	// Expect: 100-continue makes the board that runs the request send a 100
	// first: through a follower that 1xx must not become the final status.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 500 * time.Millisecond}}
	get := func(b *board, method, path string) (int, string) {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader("{}")
		}
		req, _ := http.NewRequest(method, "http://"+b.http+path, body)
		if method == "POST" {
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	for _, tc := range []struct {
		method, path, has string
		want              int
	}{
		{"GET", "/api/devices/nope", `"error"`, http.StatusNotFound},
		{"POST", "/api/devices/nope/turn_on", `"error"`, http.StatusNotFound},
		{"POST", "/api/devices/s1/fly", `"error"`, http.StatusBadRequest},
		{"GET", "/no/such/page", `"error"`, http.StatusNotFound},
		{"POST", "/api/devices/s1/read", `"name":"s1"`, http.StatusOK},
		{"POST", "/api/devices/led1/set?value=abc", `"error"`, http.StatusBadRequest},
		{"POST", "/api/devices/led1/set?value=0.25", `"name":"led1"`, http.StatusOK},
		{"POST", "/cgi-bin/missing", `"error"`, http.StatusNotFound},
	} {
		code0, body0 := get(boards[0], tc.method, tc.path)
		if code0 != tc.want {
			t.Errorf("%s %s on the master: %d %q, want %d", tc.method, tc.path, code0, body0, tc.want)
		}
		for _, b := range boards[1:] {
			code, body := get(b, tc.method, tc.path)
			if code != code0 || !strings.Contains(body, tc.has) || !strings.Contains(body0, tc.has) {
				t.Errorf("%s %s: master %d %q, %s %d %q", tc.method, tc.path, code0, body0, b.name, code, body)
			}
		}
	}
	// The master's dispatch counts (the UI's requests/s chart) show on every
	// board's view, not only the master's.
	testutil.EventuallyWithin(t, "completed counts on a non-master's /api/cluster", 10*time.Second, func() bool {
		v, err := boards[2].view()
		return err == nil && v.Completed["control"] >= 1
	})

	// A forged dispatch mark is refused.
	req, _ := http.NewRequest("POST", "http://"+boards[1].http+"/api/devices/s1/read", nil)
	req.Header.Set("X-Ews-Dispatch", "1.2.3.forged")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged mark: %d, want 403", resp.StatusCode)
	}

	// An Idempotency-Key is cluster-wide: taken on ews2 (led1), it is told
	// to ews3 over the boards' local event streams, so the same key for
	// ews3's led2 is refused there instead of running (docs/NOTES.md "Idempotency keys").
	keyed := func(path string) (int, string, string) {
		req, _ := http.NewRequest("POST", "http://"+boards[0].http+path, nil)
		req.Header.Set("Idempotency-Key", "e2e-cluster-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(out)
	}
	const remote = `ews_idempotency_claims_total{origin="remote"}`
	before := metric(boards[2], remote)
	if code, _, body := keyed("/api/devices/led1/turn_on"); code != http.StatusOK {
		t.Fatalf("keyed action on ews2: %d %s", code, body)
	}
	testutil.EventuallyWithin(t, "ews3 learns ews2's key", 10*time.Second, func() bool { return metric(boards[2], remote) > max(before, 0) })
	if code, _, body := keyed("/api/devices/led2/turn_on"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "ews2") {
		t.Fatalf("the same key for ews3's device: %d %s, want 422 naming ews2", code, body)
	}
	if code, replayed, body := keyed("/api/devices/led1/turn_on"); code != http.StatusOK || replayed != "true" {
		t.Fatalf("the same request again: %d replayed=%q %s, want the first answer replayed", code, replayed, body)
	}
}
