package dispatch

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// Reads of one device share one read at the entry too (issue 49): a
// device read that enters this board while the same read entered earlier
// is still under way, queued or running, waits for that one's answer and
// gets a copy, without a queue place, a placement or a slot of its own,
// when the device is one no request changes (Options.SharedRead: a
// sensor): a read that joined a relay's read after the relay was read
// could miss an action that ended in between, and a client that saw that
// action's answer would read the state from before it.
// The board's device would have shared them anyway (hal's flights) when
// both reached it during one read; at the entry they also share when the
// boards placed them apart, and the second costs nothing. Only a plain
// read shares: POST /api/devices/{name}/read with the same query, no
// body, no Idempotency-Key, proxy mode without sticky cookies (each
// client's own rights were checked on entry: the gate). A read whose
// first failed (any answer but 200) goes its own way.

// readFlights are the device reads under way from this entry, by key.
type readFlights struct {
	shareable func(device string) bool // Options.SharedRead; nil: none
	mu        sync.Mutex
	m         map[string]*readFlight
}

// readFlight is one read under way and, once done, its answer.
type readFlight struct {
	done   chan struct{} // closed when the answer (or its failure) is in
	joined atomic.Int32  // reads waiting for it (tests)
	ok     bool          // a 200 the others may copy
	header http.Header
	body   []byte
}

// shareKey is the key under which rt's request shares a read, "" when it
// may not share.
func (f *Front) shareKey(rt *route) string {
	r := rt.in.r
	if f.cfg.redirect || f.cfg.sticky || len(rt.in.body) != 0 || r.Header.Get("Idempotency-Key") != "" {
		return ""
	}
	if !rt.in.read || f.reads.shareable == nil || !f.reads.shareable(rt.in.dev) {
		return ""
	}
	return r.URL.RequestURI()
}

// join returns the flight under way for key (first false), or starts one
// that rt's request leads (first true).
func (fs *readFlights) join(key string) (fl *readFlight, first bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fl := fs.m[key]; fl != nil {
		return fl, false
	}
	if fs.m == nil {
		fs.m = map[string]*readFlight{}
	}
	fl = &readFlight{done: make(chan struct{})}
	fs.m[key] = fl
	return fl, true
}

// end publishes the leader's answer held in hw (nil: none, it failed) and
// lets the flight's waiters go; later reads start a flight of their own.
func (fs *readFlights) end(key string, fl *readFlight, hw *heldWriter) {
	fs.mu.Lock()
	if fs.m[key] == fl {
		delete(fs.m, key)
	}
	fs.mu.Unlock()
	if hw != nil && !hw.through && hw.code == http.StatusOK {
		fl.ok = true
		fl.header = hw.w.Header().Clone()
		fl.header.Del(reqtrace.Header) // the leader's marks are its own
		fl.header.Del("Set-Cookie")
		if hw.buf != nil {
			fl.body = slices.Clone(hw.buf.Bytes())
		}
	}
	close(fl.done)
}

// wait waits for fl and answers w with its answer: false when fl failed
// (the request then goes its own way) or the client left.
func (fl *readFlight) wait(w http.ResponseWriter, r *http.Request) (answered bool) {
	fl.joined.Add(1)
	select {
	case <-fl.done:
	case <-r.Context().Done():
		return true // nobody to answer
	}
	if !fl.ok {
		return false
	}
	if t := reqtrace.From(r.Context()); t != nil {
		t.Mark(reqtrace.Shared, time.Now())
		t.Flush(w.Header())
	}
	h := w.Header()
	for k, vv := range fl.header {
		h[k] = append(h[k], vv...)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(fl.body)
	return true
}

// flight is the flight under way for key, nil for none (tests).
func (fs *readFlights) flight(key string) *readFlight {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.m[key]
}
