package clusterview

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/ews-firmware/ews/state"
)

// probes measures each board's response time by active probes (GET
// /healthz) while this board is master, for the integrated policy's rt
// term: a smoothed (EWMA) round trip per board; a failed probe counts as
// the probe timeout.
type probes struct {
	mu sync.Mutex
	rt map[string]time.Duration
}

const probeTimeout = time.Second

func (p *probes) get(name string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rt[name]
}

func (p *probes) observe(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rt == nil {
		p.rt = map[string]time.Duration{}
	}
	if old, ok := p.rt[name]; ok {
		d = (old*7 + d) / 8
	}
	p.rt[name] = d
}

// Run probes every board once a second while this board is master, until
// ctx ends; it returns nil. The master measures response times in every
// cluster, for the integrated policy's and proximity's rt term and for
// the cluster view's response-time column (paper 003's monitoring table):
// one GET /healthz a board a second. A board alone returns at once.
func (v *View) Run(ctx context.Context) error {
	if v.o.Standalone {
		return nil
	}
	tr := &http.Transport{Proxy: nil, TLSClientConfig: v.o.TLS, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: probeTimeout, Transport: tr}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if !v.o.Cluster.IsMaster() {
			continue
		}
		var wg sync.WaitGroup
		for _, b := range v.o.Cluster.Boards() {
			if b.HTTP == "" || b.Runstate == state.Down {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, v.o.Scheme+"://"+b.HTTP+"/healthz", nil)
				resp, err := c.Do(req)
				d := time.Since(start)
				if err != nil {
					d = probeTimeout
				} else {
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						d = probeTimeout
					}
				}
				v.rt.observe(b.Name, d)
			}()
		}
		wg.Wait()
	}
}
