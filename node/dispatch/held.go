package dispatch

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxHeldAnswer is the largest answer kept in memory so its slot is given
// back before the client reads it: a larger one (or an event stream)
// goes out as it is written, its slot held until it is sent.
const MaxHeldAnswer = 512 << 10

// heldWriteTimeout bounds writing a held answer to a client once its slot
// is given back (the server's http.write bounds it too).
const heldWriteTimeout = 30 * time.Second

// heldWriter keeps an answer in memory while the request holds a slot, so
// a slow reader holds memory, not a slot (docs/NOTES.md "Nothing
// anonymous holds a slot"): finish writes it out after the slot was
// given back. An event stream, a Flush of one, or an answer past
// MaxHeldAnswer turns it into a plain pass-through.
type heldWriter struct {
	w       http.ResponseWriter
	buf     *bytes.Buffer // from heldBufs once something is held
	code    int           // the status held back; 0: none yet
	through bool          // passing writes through
}

// heldBufs keeps the buffers of held answers between requests: every
// forwarded answer passes through one, so none is grown anew each time.
var heldBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (h *heldWriter) Header() http.Header { return h.w.Header() }

func (h *heldWriter) WriteHeader(code int) {
	if h.through || (code >= 100 && code < 200) {
		h.w.WriteHeader(code) // an informational answer goes at once
		return
	}
	if h.code == 0 {
		h.code = code
	}
	if eventStream(h.w.Header()) {
		h.passThrough()
	}
}

func (h *heldWriter) Write(p []byte) (int, error) {
	if h.code == 0 {
		h.WriteHeader(http.StatusOK)
	}
	if !h.through && h.held()+len(p) > MaxHeldAnswer {
		h.passThrough()
	}
	if h.through {
		return h.w.Write(p)
	}
	if h.buf == nil {
		h.buf = heldBufs.Get().(*bytes.Buffer)
	}
	return h.buf.Write(p)
}

// Flush passes an event stream's writes on; any other answer stays held
// until finish (a Flush of a body of unknown length is not a stream).
func (h *heldWriter) Flush() {
	trailers := len(h.w.Header()["Trailer"]) > 0 // they need the header out first (forwardDirect)
	if !h.through && !trailers && !eventStream(h.w.Header()) {
		return
	}
	h.passThrough()
	_ = http.NewResponseController(h.w).Flush()
}

// Hijack hands the connection over after what is held was written.
func (h *heldWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.passThrough()
	return http.NewResponseController(h.w).Hijack()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (h *heldWriter) Unwrap() http.ResponseWriter { return h.w }

// passThrough writes what is held and passes every later write through.
func (h *heldWriter) passThrough() {
	if h.through {
		return
	}
	h.through = true
	if h.code != 0 {
		h.w.WriteHeader(h.code)
	}
	if h.buf != nil {
		if h.buf.Len() > 0 {
			_, _ = h.w.Write(h.buf.Bytes())
		}
		if h.buf.Cap() <= 64<<10 { // a board keeps no large answer's buffer
			h.buf.Reset()
			heldBufs.Put(h.buf)
		}
		h.buf = nil
	}
}

// held is how many bytes of the answer are held.
func (h *heldWriter) held() int {
	if h.buf == nil {
		return 0
	}
	return h.buf.Len()
}

// finish writes out a held answer, under its own write deadline: the
// request's slot is already given back.
func (h *heldWriter) finish() {
	if h.through || h.code == 0 {
		return
	}
	_ = http.NewResponseController(h.w).SetWriteDeadline(time.Now().Add(heldWriteTimeout))
	h.passThrough()
}
