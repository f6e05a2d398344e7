package e2e

// What TestRollingUpgradeFromLastLanded watches while the boards upgrade:
// the master every board names, and what any board refused.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// refusalLine reports whether a board's log line says it refused another
// board or what another board sent (credentials, gossip, a member).
// Gossip from a board that has not joined yet (it is restarting) is
// refused for that reason alone, and joins a moment later: not counted.
func refusalLine(l string) bool {
	if strings.Contains(l, "level=DEBUG") && strings.Contains(l, "ask the sender for its intro") {
		// a restarted board's report that came before its intro: the
		// receiver asks for the intro and takes what follows (state's
		// warnAuth logs it at debug for that reason); not a refusal
		// between builds, which would not be cured
		return false
	}
	if strings.Contains(l, `msg="message refused"`) {
		return !strings.Contains(l, "which is not a member (not joined yet")
	}
	for _, s := range []string{"gossip message refused", "refused credentials", "gossip refused", "board refused", "its messages are refused until", ": refused"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// checkLogRefusals fails on each refusal in the boards' logs, once per
// text, with how often it was logged.
func checkLogRefusals(t *testing.T, boards []*tlsBoard) {
	t.Helper()
	for _, b := range boards {
		seen := map[string]int{} // a refusal without its time -> how often
		var order []string
		for _, l := range strings.Split(b.log.String(), "\n") {
			if !refusalLine(l) {
				continue
			}
			if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "time=") {
				l = rest
			}
			if seen[l]++; seen[l] == 1 {
				order = append(order, l)
			}
		}
		for _, l := range order {
			t.Errorf("%s logged a refusal %d times: %s", b.name, seen[l], l)
		}
	}
}

// upgradeWatch polls every board's table and refusal counters while the
// upgrade runs.
type upgradeWatch struct {
	c        *upCluster
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once

	mu       sync.Mutex
	rounds   int
	epochs   map[uint64]string // epoch -> the master seen at it
	clashes  []string          // an epoch seen with two masters
	splits   []string          // boards naming different masters for longer than splitLimit
	history  []string          // each new (epoch, master) as first seen
	refusals map[string]string // board+series -> the first nonzero sample
}

// splitLimit is how long boards that answer may name different masters:
// a table takes a heartbeat or two to spread, and a takeover waits tmax
// (1 s); boards that refuse each other's gossip disagree for as long as
// the mixed cluster runs.
const splitLimit = 3 * time.Second

func watchUpgrade(c *upCluster) *upgradeWatch {
	w := &upgradeWatch{c: c, done: make(chan struct{}), epochs: map[uint64]string{}, refusals: map[string]string{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var splitSince time.Time // when the boards that answer began naming different masters
		reported := false
		deadline := time.Now().Add(3 * time.Minute) // bounded even if stop is never called
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case <-w.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			masters := map[string][]string{}
			for _, b := range c.boards {
				var v clusterView
				if c.get(b, "/api/cluster", &v) != nil || v.Master == "" {
					continue // restarting, or listening for a master
				}
				masters[v.Master] = append(masters[v.Master], b.name)
				w.saw(b.name, v)
			}
			w.mu.Lock()
			w.rounds++
			switch {
			case len(masters) <= 1:
				splitSince, reported = time.Time{}, false
			case splitSince.IsZero():
				splitSince = time.Now()
			case !reported && time.Since(splitSince) > splitLimit: // once per split
				reported = true
				w.splits = append(w.splits, fmt.Sprintf("boards name different masters for more than %v from %s: %v", splitLimit, splitSince.Format("15:04:05.000"), masters))
			}
			w.mu.Unlock()
			if i%4 == 0 {
				for _, b := range c.boards {
					var m string
					if c.get(b, "/metrics", &m) == nil {
						w.sawMetrics(b.name, m)
					}
				}
			}
		}
	}()
	return w
}

func (w *upgradeWatch) saw(board string, v clusterView) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.epochs[v.Epoch]
	switch {
	case !ok:
		w.epochs[v.Epoch] = v.Master
		w.history = append(w.history, fmt.Sprintf("epoch %d: %s (first seen by %s)", v.Epoch, v.Master, board))
	case m != v.Master:
		c := fmt.Sprintf("%s sees master %s at epoch %d, another board saw %s", board, v.Master, v.Epoch, m)
		if !slices.Contains(w.clashes, c) {
			w.clashes = append(w.clashes, c)
		}
	}
}

// badRefusals are the counters that say a board refused what another
// board of the cluster sent: a mark (403), credentials (401 turned 502),
// gossip it cannot decrypt, a member, a peer list. Not counted: stale-epoch
// and expired marks (503, sent again by the client) and gossip refused
// for its content (an election conflict, a packet before its sender joined).
var badRefusals = []string{
	`ews_dispatch_auth_refused_total`,
	`ews_dispatch_marks_refused_total{reason="malformed"}`, `ews_dispatch_marks_refused_total{reason="signature"}`,
	`ews_dispatch_marks_refused_total{reason="target"}`, `ews_dispatch_marks_refused_total{reason="path"}`,
	`ews_dispatch_marks_refused_total{reason="kind"}`, `ews_dispatch_marks_refused_total{reason="replayed"}`,
	`ews_dispatch_marks_refused_total{reason="client"}`, `ews_dispatch_marks_refused_total{reason="query"}`,
	`ews_dispatch_marks_refused_total{reason="not-a-peer"}`,
	`ews_cluster_messages_refused_total{type="encrypted"}`, `ews_cluster_messages_refused_total{type="unknown"}`,
	`ews_cluster_messages_refused_total{type="peers"}`, `ews_cluster_messages_refused_total{type="member"}`,
}

func (w *upgradeWatch) sawMetrics(board, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(text, "\n") {
		for _, s := range badRefusals {
			match := strings.HasPrefix(l, s+" ")
			if !strings.Contains(s, "{") { // every label of the series
				match = match || strings.HasPrefix(l, s+"{")
			}
			if !match {
				continue
			}
			f := strings.Fields(l)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v > 0 {
				if _, ok := w.refusals[board+" "+f[0]]; !ok {
					w.refusals[board+" "+f[0]] = l
				}
			}
		}
	}
}

// stop ends the watch (once; later calls do nothing) and takes a last
// sample of the counters, after the last board is back.
func (w *upgradeWatch) stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.wg.Wait()
		for _, b := range w.c.boards {
			var m string
			if w.c.get(b, "/metrics", &m) == nil {
				w.sawMetrics(b.name, m)
			}
		}
	})
}

func (w *upgradeWatch) check(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("%d rounds of every board's table; masters by epoch: %s", w.rounds, strings.Join(w.history, "; "))
	if w.rounds < 10 {
		t.Fatalf("only %d rounds of the boards' tables: the watch saw too little", w.rounds)
	}
	for _, s := range append(w.clashes, w.splits...) {
		t.Error(s)
	}
}

func (w *upgradeWatch) checkRefusals(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.refusals))
	for k := range w.refusals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s: %s", strings.Fields(k)[0], w.refusals[k])
	}
}
