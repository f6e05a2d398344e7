package node

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// masterStats holds, on a board that is not master, the master's queue
// depths and dispatch counts, read from its /api/cluster once a second:
// they live only in the master's memory (not in the gossiped table), and
// every board's view should show them.
type masterStats struct {
	mu        sync.Mutex
	queue     map[string]int
	completed map[string]uint64
}

func (s *masterStats) Queue() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.queue))
	for k, v := range s.queue {
		out[k] = v
	}
	return out
}

func (s *masterStats) Completed() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed == nil {
		return nil
	}
	out := make(map[string]uint64, len(s.completed))
	for k, v := range s.completed {
		out[k] = v
	}
	return out
}

// pollMaster refreshes n.stats from the master while this board follows.
func (n *Node) pollMaster(ctx context.Context) {
	c := &http.Client{Timeout: 800 * time.Millisecond}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n.cluster.IsMaster() {
			continue
		}
		_, addr, ok := n.cluster.Master()
		if !ok || addr == "" {
			continue
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/cluster", nil)
		resp, err := c.Do(req)
		if err != nil {
			continue
		}
		var v struct {
			Queue     map[string]int    `json:"queue"`
			Completed map[string]uint64 `json:"completed"`
		}
		err = json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&v)
		resp.Body.Close()
		if err != nil {
			continue
		}
		n.stats.mu.Lock()
		n.stats.queue, n.stats.completed = v.Queue, v.Completed
		n.stats.mu.Unlock()
	}
}
