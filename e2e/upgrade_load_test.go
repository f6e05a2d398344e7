package e2e

// The load TestRollingUpgradeFromLastLanded keeps on the boards while they
// upgrade, and its check.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// upLoad is steady, bounded load through the master and both followers,
// authenticated, as a client following the README would send it: each
// device action carries an Idempotency-Key, a 503 with Retry-After is sent
// again after it, and a board that refuses the connection (it is
// restarting; nothing was accepted) is left for the next board.
type upLoad struct {
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once

	mu      sync.Mutex
	answers []upAnswer
	notes   map[string]int // answers other than 2xx, final or not, by text
}

// upAnswer is the final answer to one request.
type upAnswer struct {
	what     string // "worker seq: METHOD path via entry"
	status   int    // 0: no answer
	err      string
	retried  int // 503 + Retry-After answers before this one
	otherBd  int // boards that refused the connection before this one answered
	start    time.Time
	answered time.Time
}

const (
	loadWorkers   = 6                     // two per entry board: one waits out a Retry-After, the other goes on
	loadPerWorker = 1000                  // requests at most
	loadPace      = 40 * time.Millisecond // between one worker's requests: ~120 requests/s in all at most
	loadPerReq    = 30 * time.Second      // one request's retries end here
)

func startUpgradeLoad(c *upCluster) *upLoad {
	l := &upLoad{done: make(chan struct{}), notes: map[string]int{}}
	for w := range loadWorkers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			client := &http.Client{Timeout: 10 * time.Second, Transport: unchecked(c.client.Transport).Clone()}
			defer client.CloseIdleConnections()
			for seq := range loadPerWorker {
				select {
				case <-l.done:
					return
				default:
				}
				k := strconv.Itoa(seq/3%3 + 1) // each kind of request to each board's device
				method, path := http.MethodPost, "/api/devices/relay"+k+"/toggle"
				switch seq % 3 {
				case 1:
					method, path = http.MethodGet, "/api/devices/relay"+k
				case 2:
					path = "/api/devices/temp" + k + "/read"
				}
				a := l.one(c, client, w, fmt.Sprintf("w%d-%d", w, seq), method, path)
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
				time.Sleep(loadPace) // pacing, not waiting for a condition
			}
		}()
	}
	return l
}

// one sends one request until it has an answer: worker w enters at board
// w (ews1 the master, ews2 and ews3 followers) and moves on to the next
// board when one refuses the connection.
func (l *upLoad) one(c *upCluster, client *http.Client, w int, key, method, path string) upAnswer {
	a := upAnswer{start: time.Now()}
	entry := w
	for time.Since(a.start) < loadPerReq {
		b := c.boards[entry%len(c.boards)]
		a.what = fmt.Sprintf("%s: %s %s via %s", key, method, path, b.name)
		req, err := http.NewRequest(method, "https://"+b.https+path, nil)
		if err != nil {
			a.err = err.Error()
			return a
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", "upgrade-"+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				a.otherBd++
				entry++
				time.Sleep(20 * time.Millisecond) // pacing before the next board
				continue
			}
			a.err, a.answered = err.Error(), time.Now()
			return a
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		a.status, a.answered = resp.StatusCode, time.Now()
		if resp.StatusCode >= 300 {
			l.note(fmt.Sprintf("%d from %s: %s", resp.StatusCode, b.name, strings.TrimSpace(string(msg))))
		}
		if ra := resp.Header.Get("Retry-After"); resp.StatusCode == http.StatusServiceUnavailable && ra != "" {
			secs, err := strconv.Atoi(ra)
			if err != nil || secs < 0 || secs > 10 {
				a.err = "503 with a Retry-After that is not a number of seconds: " + ra
				return a
			}
			a.retried++
			time.Sleep(time.Duration(secs) * time.Second) // what Retry-After asks a client to do
			continue
		}
		return a
	}
	a.err = fmt.Sprintf("no answer other than 503 or a refused connection within %v", loadPerReq)
	return a
}

// note counts an answer other than 2xx by its text.
func (l *upLoad) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes[s]++
}

func (l *upLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// waitAnswers waits until the load has n answers.
func (l *upLoad) waitAnswers(t *testing.T, n int) {
	t.Helper()
	testutil.EventuallyWithin(t, fmt.Sprintf("%d answers to the load", n), 30*time.Second, func() bool { return l.count() >= n })
}

// stop ends the load and waits for its requests (once; later calls do nothing).
func (l *upLoad) stop() {
	l.stopOnce.Do(func() {
		close(l.done)
		l.wg.Wait()
	})
}

// check fails on any request without a 2xx answer; a 503 with Retry-After
// that was sent again and then answered counts as answered (the README's
// rule for clients), and so does a request a restarting board refused the
// connection for, answered by the next board.
func (l *upLoad) check(t *testing.T, from, to time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ok, during, retried, moved int
	var took []time.Duration
	byStatus := map[int]int{}
	var bad []string
	for _, a := range l.answers {
		byStatus[a.status]++
		if a.retried > 0 {
			retried++
		}
		if a.otherBd > 0 {
			moved++
		}
		if a.status >= 200 && a.status < 300 && a.err == "" {
			ok++
			took = append(took, a.answered.Sub(a.start))
			if a.answered.After(from) && a.start.Before(to) {
				during++
			}
			continue
		}
		bad = append(bad, fmt.Sprintf("%s -> %d %s (after %d retries, %d boards refused the connection)", a.what, a.status, a.err, a.retried, a.otherBd))
	}
	codes := make([]int, 0, len(byStatus))
	for c := range byStatus {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var st []string
	for _, c := range codes {
		st = append(st, fmt.Sprintf("%d: %d", c, byStatus[c]))
	}
	slices.Sort(took)
	var p50, top time.Duration
	if len(took) > 0 {
		p50, top = took[len(took)/2], took[len(took)-1]
	}
	t.Logf("load: %d requests, %d answered 2xx (%d during the upgrade; median %v, slowest %v with its retries), %d after a 503 + Retry-After, %d on another board after a refused connection; final statuses {%s}",
		len(l.answers), ok, during, p50.Round(time.Millisecond), top.Round(time.Millisecond), retried, moved, strings.Join(st, ", "))
	notes := make([]string, 0, len(l.notes))
	for n := range l.notes {
		notes = append(notes, n)
	}
	slices.Sort(notes)
	for _, n := range notes {
		t.Logf("%d x %s", l.notes[n], n)
	}
	for i, b := range bad {
		if i == 20 {
			t.Errorf("... and %d more", len(bad)-i)
			break
		}
		t.Error(b)
	}
	if during < 30 {
		t.Errorf("only %d requests answered during the upgrade: the load did not test the mixed cluster", during)
	}
}
