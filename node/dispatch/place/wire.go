package place

import (
	"net"
	"sync"
	"time"
)

// Timing of the placement channel.
const (
	// placePing is how often a follower pings an idle channel.
	placePing = time.Second
	// placeIdle: a channel that brings no frame for this long is dead (a
	// master or follower paused, a half-open connection); its owner closes
	// it. Three pings.
	placeIdle = 3 * placePing
	// placeWrite bounds one write of frames.
	placeWrite = 2 * time.Second
)

// frameWriter coalesces the frames of many goroutines into few writes:
// the goroutine that finds no write under way writes everything queued,
// also what others queue while it writes; the others return at once. Under
// load one write carries many frames, at rest each goes alone, with no
// goroutine hand-off either way.
type frameWriter struct {
	nc      net.Conn
	mu      sync.Mutex
	buf     []byte // frames queued; append under mu, then flush
	spare   []byte
	writing bool
	held    bool // hold: the reader answers a batch of frames; release writes it
	err     error
}

// flush writes what is queued, unless another goroutine is writing (it
// writes it). Called with mu held; returns with mu released. The error is
// the channel's first write error.
func (w *frameWriter) flush() error {
	if w.writing || w.held || w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.writing = true
	for len(w.buf) > 0 && w.err == nil {
		out := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		_ = w.nc.SetWriteDeadline(time.Now().Add(placeWrite))
		_, err := w.nc.Write(out)
		w.mu.Lock()
		w.spare = out[:0]
		if err != nil {
			w.err = err
		}
	}
	w.writing = false
	err := w.err
	w.mu.Unlock()
	return err
}

// hold keeps what is queued from now on until release: the master's
// reader holds its channel while it handles the frames one read brought
// (places, ends, leases, pings), so their answers, and those other
// goroutines queue meanwhile, leave in one write instead of one each.
// The reader handles frames without waiting on anything, so a hold is
// short; release comes before its next read (frameReader.drained).
func (w *frameWriter) hold() {
	w.mu.Lock()
	w.held = true
	w.mu.Unlock()
}

// release ends a hold and writes what it kept; a write error closes the
// connection (the reader fails next).
func (w *frameWriter) release() {
	w.mu.Lock()
	if !w.held {
		w.mu.Unlock()
		return
	}
	w.held = false
	if w.flush() != nil {
		w.nc.Close()
	}
}

// send queues an empty frame of typ and flushes.
func (w *frameWriter) sendEmpty(typ byte) error {
	w.mu.Lock()
	w.buf = appendEmpty(w.buf, typ)
	return w.flush()
}

// idleReader is a connection's reader that fails when nothing arrives for
// placeIdle.
type idleReader struct{ nc net.Conn }

func (r idleReader) Read(p []byte) (int, error) {
	_ = r.nc.SetReadDeadline(time.Now().Add(placeIdle))
	return r.nc.Read(p)
}
