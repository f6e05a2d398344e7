package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/tool/chaos"
)

// chaosClient is the open-loop load: Rate requests a second whatever the
// answers, each a device action on a random board that is up; most carry a
// fresh Idempotency-Key, some none, a few are the client's own mistakes.
// A 503 is sent again after its Retry-After (at most 2 s), with the same
// key; a 408 (the board's listener got no request header in time) and a
// keyed request that got no answer are sent again to another board.
// Every attempt is logged.
type chaosClient struct {
	cn       *chaosNet
	rate     float64
	attempts int           // sends per request at most
	timeout  time.Duration // per attempt
	inflight int           // requests in flight at most; more are not sent (and counted)
	hc       *http.Client

	mu      sync.Mutex
	recs    []chaos.Record
	skipped int // not sent: every board down, or inflight reached
}

func newChaosClient(cn *chaosNet, rate float64) *chaosClient {
	// a fresh connection each attempt: a keep-alive connection to a board
	// killed meanwhile would fail a request that never left the client
	tr := &http.Transport{DisableKeepAlives: true}
	// the attempt's timeout is longer than any bound the boards promise (5 s
	// for a request header, tmax plus a heartbeat of hold, the forward's
	// response-header timeout of the CGI timeout plus 5 s): an attempt
	// still unanswered then is lost, not merely slow
	return &chaosClient{cn: cn, rate: rate, attempts: 5, timeout: 40 * time.Second, inflight: 512, hc: &http.Client{Transport: tr}}
}

// run sends until ctx ends and returns when every request has its last attempt.
func (c *chaosClient) run(ctx context.Context, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.inflight)
	for id := 0; ; id++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
		req := c.pick(r, id)
		select {
		case sem <- struct{}{}:
		default:
			c.mu.Lock()
			c.skipped++
			c.mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.send(req, rand.New(rand.NewPCG(seed, uint64(id)+2)))
		}()
	}
}

type chaosReq struct {
	id      int
	path    string
	key     string
	mistake bool
}

func (c *chaosClient) pick(r *rand.Rand, id int) chaosReq {
	devices := []string{"pump1"}
	for _, b := range c.cn.boards {
		devices = append(devices, "relay"+b.name[len("ews"):])
	}
	actions := []string{"turn_on", "turn_off", "toggle"}
	req := chaosReq{id: id, path: "/api/devices/" + devices[r.IntN(len(devices))] + "/" + actions[r.IntN(len(actions))]}
	switch p := r.IntN(100); {
	case p < 3:
		req.path, req.mistake = "/api/devices/nodev/turn_on", true // 404
	case p < 5:
		req.path, req.mistake = "/api/devices/pump1/explode", true // 400
	case p < 15: // no key
	default:
		req.key = fmt.Sprintf("chaos-%d-%d", id, r.Uint32())
	}
	if req.mistake && r.IntN(2) == 0 {
		req.key = fmt.Sprintf("chaos-%d-%d", id, r.Uint32())
	}
	return req
}

// up picks a board to send to among those up, not avoid if another is up.
func (c *chaosClient) up(r *rand.Rand, avoid string) *chaosBoard {
	var ups []*chaosBoard
	for _, b := range c.cn.boards {
		if !b.isDown() && b.name != avoid {
			ups = append(ups, b)
		}
	}
	if len(ups) == 0 {
		return nil
	}
	return ups[r.IntN(len(ups))]
}

func (c *chaosClient) send(req chaosReq, r *rand.Rand) {
	last := ""
	for attempt := 0; attempt < c.attempts; attempt++ {
		b := c.up(r, last)
		if b == nil {
			b = c.cn.boards[r.IntN(len(c.cn.boards))]
		}
		last = b.name
		rec := c.once(req, b, attempt)
		c.mu.Lock()
		c.recs = append(c.recs, rec)
		c.mu.Unlock()
		switch {
		case rec.Status == http.StatusServiceUnavailable:
			wait := 2 * time.Second
			if s, err := strconv.Atoi(rec.RetryAfter); err == nil && s >= 0 && time.Duration(s)*time.Second < wait {
				wait = time.Duration(s) * time.Second
			}
			time.Sleep(wait) // the server asked for it: Retry-After
		case rec.Status == http.StatusRequestTimeout: // the header did not reach the board: nothing ran, send it again elsewhere
		case rec.Status == 0 && req.key != "": // send it again; the key keeps it once
		default:
			return
		}
	}
}

func (c *chaosClient) once(req chaosReq, b *chaosBoard, attempt int) chaos.Record {
	rec := chaos.Record{ID: req.id, Attempt: attempt, Key: req.key, Mistake: req.mistake, Board: b.name, Start: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+b.http()+req.path, nil)
	if err != nil {
		rec.Err, rec.End = err.Error(), time.Now()
		return rec
	}
	hr.Header.Set("Authorization", "Bearer "+chaosToken)
	if req.key != "" {
		hr.Header.Set("Idempotency-Key", req.key)
	}
	resp, err := c.hc.Do(hr)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil {
			rec.Status, rec.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		}
	}
	if err != nil {
		rec.Err = err.Error()
	}
	rec.End = time.Now()
	return rec
}

func (c *chaosClient) records() ([]chaos.Record, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]chaos.Record(nil), c.recs...), c.skipped
}
