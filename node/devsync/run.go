package devsync

import (
	"context"
	"errors"
	"time"

	"github.com/ews-firmware/ews/internal/backoff"
)

// worker is the goroutine that keeps one board's stream.
type worker struct {
	peer   Peer
	cancel context.CancelFunc
	done   chan struct{}
}

// Run keeps one stream to each other board whose HTTP address is known,
// re-reading peers() every Refresh: it connects to boards that appear,
// disconnects from boards that leave and reconnects to a board whose
// address changed. It returns when ctx ends, after every stream goroutine
// has stopped, with nil (the node's lifecycle shape). Call it once.
func (m *Mirror) Run(ctx context.Context) error {
	workers := map[string]*worker{}
	defer func() {
		for _, w := range workers {
			w.cancel()
		}
		for _, w := range workers {
			<-w.done
		}
		if m.own != nil {
			m.own.CloseIdleConnections()
		}
	}()
	tick := time.NewTicker(m.opts.Refresh)
	defer tick.Stop()
	for {
		m.safely("reconcile", func() { m.reconcile(ctx, workers) })
		m.safely("stale check", m.markStale)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-m.poke:
		}
	}
}

// reconcile starts and stops stream workers to match peers().
func (m *Mirror) reconcile(ctx context.Context, workers map[string]*worker) {
	var peers []Peer
	if m.peers != nil {
		peers = m.peers()
	}
	want := map[string]Peer{}
	for _, p := range peers {
		if p.Name == "" || p.Name == m.self || p.HTTP == "" {
			continue
		}
		if _, dup := want[p.Name]; !dup {
			want[p.Name] = p
		}
	}
	for name, w := range workers {
		if p, ok := want[name]; ok && peerKey(p) == peerKey(w.peer) {
			continue
		}
		w.cancel()
		<-w.done
		delete(workers, name)
		if _, ok := want[name]; !ok {
			m.log.Info("devsync: board left, stream closed", "board", name)
		}
	}
	for name, p := range want {
		if _, ok := workers[name]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w := &worker{peer: p, cancel: cancel, done: make(chan struct{})}
		workers[name] = w
		go func() {
			defer close(w.done)
			m.follow(wctx, p)
		}()
	}
}

// follow streams from one board until ctx ends, reconnecting with backoff.
// It logs when the stream comes up and when it is lost or the reason it
// cannot be reached changes, not every failed attempt: a board whose stream
// keeps breaking right after it opens (flapping) is logged once, at debug
// level after that, and so are its devices going stale meanwhile.
//
// A stream counts as healthy once it delivered the board's "devices" list
// and then lived MaxBackoff. One that answered but never sent the list (a
// silent or broken board) is flapping however long it took to fail: the
// time spent dialing, or waiting Idle for a first event, is no sign of
// health, and on a loaded machine it can run past MaxBackoff.
func (m *Mirror) follow(ctx context.Context, p Peer) {
	log := m.log.With("board", p.Name, "addr", p.HTTP)
	defer m.setUp(p.Name, false, "stream closed")
	var (
		retry     = backoff.Backoff{Min: m.opts.MinBackoff, Max: m.opts.MaxBackoff, Jitter: true}
		announced bool   // "connected" logged, "lost" not yet
		flapping  bool   // the last attempt connected, then died before it was healthy
		last      string // the last failure reason logged
	)
	for ctx.Err() == nil {
		start := time.Now()
		connected := false
		var synced time.Time                          // when the board's device list was taken
		err := errors.New("devsync: stream panicked") // kept only if stream panics
		m.safely("stream "+p.Name, func() {
			err = m.stream(ctx, p, func() {
				connected = true
				if flapping {
					log.Debug("devsync: board stream connected again")
					return
				}
				log.Info("devsync: board stream connected")
				announced = true
			}, func() { synced = time.Now() })
		})
		if ctx.Err() != nil {
			return
		}
		healthy := !synced.IsZero() && time.Since(synced) >= m.opts.MaxBackoff
		// flapping: it answered, then broke before it was healthy; a board
		// that refused in between (a reboot) is logged as connected again
		flapping = connected && !healthy
		reason := err.Error()
		m.setDown(p.Name, reason, flapping)
		switch {
		case announced:
			log.Warn("devsync: board stream lost", "err", reason, "after", time.Since(start).Round(time.Millisecond))
			announced, last = false, reason
		case reason != last:
			log.Warn("devsync: board unreachable", "err", reason)
			last = reason
		default:
			log.Debug("devsync: board still unreachable", "err", reason)
		}
		if healthy {
			retry.Reset() // it had been up a while: retry soon
		}
		t := time.NewTimer(retry.Next()) // jittered: boards do not reconnect in step
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// safely runs fn, logging a panic instead of dying.
func (m *Mirror) safely(what string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("devsync: panic recovered", "in", what, "panic", p)
		}
	}()
	fn()
}
