package sched

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
)

func benchPool(n int) []*Board {
	pool := make([]*Board, n)
	for i := range pool {
		pool[i] = &Board{Name: fmt.Sprintf("ews%d", i+1), Rank: i, idx: i, Capacity: 8, Linknum: (i * 7) % 5,
			Weight: float64(1 + i%3), Running: true, ReqLoad: float64(i % 4),
			Load: Load{CPU: float64(i%10) / 10, Mem: float64(i%7) / 7, Net: 0.1, Disk: 0.2}}
	}
	return pool
}

func BenchmarkSelect(b *testing.B) {
	type named struct {
		name string
		p    Policy
	}
	var policies []named
	for _, n := range PolicyNames() { // every registered policy, as configured by default
		spec, _ := LookupPolicy(n)
		policies = append(policies, named{n, spec.New(DefaultConfig(), nil)})
	}
	policies = append(policies,
		named{"sticky-source-ip", &Sticky{Mode: StickySourceIP, Next: LeastConn{}}},
		named{"proximity", NewProximity([]ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"ews2", "ews3"}}}, LeastConn{}, nil)})
	req := &Request{Client: netip.MustParseAddr("10.1.2.3"), Path: "/api/devices/relay1/toggle"}
	for _, n := range []int{3, 32} {
		pool := benchPool(n)
		for _, p := range policies {
			b.Run(fmt.Sprintf("%s/%d", p.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if p.p.Select(pool, req) == nil {
						b.Fatal("nil")
					}
				}
			})
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	c, _ := NewClassifier(nil)
	b.ReportAllocs()
	for b.Loop() {
		c.Classify("POST", "/api/devices/relay1/turn_on")
		c.Classify("GET", "/static/app.js")
	}
}

// BenchmarkAcquireDone is the uncontended path: a free board, nothing queued.
func BenchmarkAcquireDone(b *testing.B) {
	for _, n := range []int{3, 32} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d, _ := NewDispatcher(schedCfg("priority-lc", 64), Options{})
			var pool []Board
			for _, p := range benchPool(n) {
				pool = append(pool, Board{Name: p.Name, Capacity: 8, Running: true, Weight: 1, Linknum: -1})
			}
			d.Update(rows(pool))
			ctx := context.Background()
			req := &Request{Class: control}
			b.ReportAllocs()
			for b.Loop() {
				t, err := d.Acquire(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				t.Done()
			}
		})
	}
}

// BenchmarkEnqueueDequeue is one request through the queue: it is queued
// behind a full board, and the Done of the running request dispatches it
// (policy choice, wake-up, metrics), without the caller's goroutine.
func BenchmarkEnqueueDequeue(b *testing.B) {
	for _, n := range []int{3, 32} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d, _ := NewDispatcher(schedCfg("priority-lc", 64), Options{})
			var pool []Board
			for _, p := range benchPool(n) {
				pool = append(pool, Board{Name: p.Name, Capacity: 1, Running: true, Weight: 1, Linknum: -1})
			}
			d.Update(rows(pool))
			var held []Ticket
			for range pool {
				t, _ := d.Acquire(context.Background(), &Request{})
				held = append(held, t)
			}
			req := &Request{Class: browse}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				d.mu.Lock()
				w := d.waiters.Get().(*waiter)
				w.req, w.class, w.q, w.board, w.enq = req, browse, browse, -1, d.now()
				d.seq++
				w.seq = d.seq
				d.push(w)
				d.mu.Unlock()
				held[i].Done() // frees a slot: w is dispatched
				<-w.ch
				held[i] = w.t
				d.putWaiter(w)
				i = (i + 1) % len(held)
			}
		})
	}
}

// BenchmarkDevice is the device-aware path (device.go): free is a request
// for a free device (Acquire and Done); wait is one queued behind its busy
// device and dispatched by the Done of the action that held it.
func BenchmarkDevice(b *testing.B) {
	cfg := schedCfg("priority-lc", 64)
	for i := range 16 {
		cfg.Devices = append(cfg.Devices, Device{Name: fmt.Sprintf("dev%d", i)})
	}
	cfg.Devices = append(cfg.Devices, Device{Name: "relay1"})
	d, _ := NewDispatcher(cfg, Options{})
	var pool []Board
	for _, p := range benchPool(3) {
		pool = append(pool, Board{Name: p.Name, Capacity: 8, Running: true, Weight: 1, Linknum: -1})
	}
	d.Update(rows(pool))
	ctx := context.Background()
	req := &Request{Class: control, Board: "ews2", Device: "relay1"}
	b.Run("free", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t, err := d.Acquire(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			t.Done()
		}
	})
	b.Run("wait", func(b *testing.B) {
		held, _ := d.Acquire(ctx, req)
		di := d.device(req)
		b.ReportAllocs()
		for b.Loop() {
			d.mu.Lock()
			w := d.waiters.Get().(*waiter)
			w.req, w.class, w.q, w.board, w.enq = req, control, control, 1, d.now()
			w.dev, w.lock = di, d.lockOf(di)
			d.seq++
			w.seq = d.seq
			d.push(w)
			d.mu.Unlock()
			held.Done() // frees the device: w is dispatched
			<-w.ch
			held = w.t
			d.putWaiter(w)
		}
		held.Done()
	})
}
