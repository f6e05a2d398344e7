package dispatch

import (
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// A queue rebuilt under waiting requests (new scheduler settings,
// docs/NOTES.md "Configuration store"): the old one closes, and what
// waited in it waits in the new one and runs, nothing shed.
func TestReplacedQueueKeepsItsRequests(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeBlock)
	const n = 4
	codes := make(chan int, n)
	for range n {
		go func() {
			resp, _ := do(t, nil, "GET", m.srv.URL+"/", nil, "")
			codes <- resp.StatusCode
		}()
	}
	testutil.Eventually(t, "one running, the rest queued", func() bool { return tc.d.Depths()["browse"] == n-1 })
	cfg := sched.DefaultConfig()
	cfg.QueueTarget = 0
	cfg.Policy = "rr"
	d, err := sched.NewDispatcher(cfg, sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(linknum int) []state.Board { // the table, with ews2's own report (invariant 3)
		return []state.Board{{Name: "ews1", HTTP: m.addr, Capacity: 1, Weight: 1, Runstate: state.Down, Linknum: -1},
			{Name: "ews2", Rank: 1, HTTP: b.addr, Capacity: 1, Weight: 1, Runstate: state.Running, Linknum: linknum}}
	}
	d.Update(rows(1)) // the request the old queue placed still runs
	old := m.front.SetDispatcher(d)
	old.Close()
	testutil.Eventually(t, "the waiting requests in the new queue", func() bool { return d.Depths()["browse"] == n-1 })
	b.mode.Store(modeEcho)
	close(b.release)
	if c := <-codes; c != http.StatusOK { // the one that ran
		t.Errorf("the running request answered %d", c)
	}
	d.Update(rows(0)) // ews2's next report: it runs nothing now
	for range n - 1 {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("a request answered %d, want 200", c)
		}
	}
	t.Cleanup(func() { m.front.StepDown() })
}
