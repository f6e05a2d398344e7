// Package guard is what every request to a board passes first: body limits, JSON errors, request metrics, and the credential gate the front door calls.
package guard

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/access"
)

// Options are what Wrap needs of the board.
type Options struct {
	MaxBody     int64 // http.max_body; 0: no limit
	MaxFirmware int64 // a firmware upload's limit (streamed to disk, never buffered)
	// Firmware reports whether r uploads firmware (MaxFirmware applies).
	Firmware func(r *http.Request) bool
	Metrics  *Metrics
	// Sign is r as it goes on: a write of the users or the configuration
	// carries its person's signature (access.PersonSigner).
	Sign func(r *http.Request) *http.Request
	// Refuse answers a revoked board on a connection opened before
	// (node/boardrevoke); true when it did.
	Refuse func(w http.ResponseWriter, r *http.Request) bool
	// Vouched reports whether r may carry access.HeaderActor: the
	// automation's own request, or one a board forwards with a dispatch
	// mark. From anyone else it is stripped: the audit log's user is not
	// the client's to write.
	Vouched func(r *http.Request) bool
}

// Wrap puts the front-door guards around the mux: body size limit, JSON
// errors for everything net/http answers in plain text (404, 405, 413 from
// MaxBytesReader), request metrics and the in-flight count.
func Wrap(next http.Handler, o Options) http.Handler {
	m := o.Metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Add(1)
		defer m.inFlight.Add(-1)
		sw := &statusWriter{ResponseWriter: w}
		r = o.Sign(r)        // a write of the users or the configuration carries its person's signature
		if o.Refuse(sw, r) { // a revoked board on a connection opened before (node/boardrevoke)
			m.observe(r, sw, start)
			return
		}
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.ContentLength > 0 || len(r.TransferEncoding) > 0) {
			// a read has no body; one that sends one (slowly)
			// is refused before it can hold anything
			sw.Header().Set("Connection", "close")
			httpx.Error(sw, http.StatusBadRequest, "a %s request must not carry a body", r.Method)
			m.observe(r, sw, start)
			return
		}
		maxBody, firmware := o.MaxBody, o.Firmware(r)
		if firmware {
			maxBody = o.MaxFirmware // streamed to disk, never buffered
		}
		if maxBody > 0 {
			if r.ContentLength > maxBody {
				httpx.Error(sw, http.StatusRequestEntityTooLarge, "request body of %d bytes is over the limit of %d bytes", r.ContentLength, maxBody)
				m.observe(r, sw, start)
				return
			}
			r.Body = http.MaxBytesReader(sw, r.Body, maxBody)
			if r.ContentLength < 0 && !firmware {
				var ok bool
				if r, ok = readBody(sw, r, maxBody); !ok {
					m.observe(r, sw, start)
					return
				}
			}
		}
		if len(r.Header[access.HeaderActor]) > 0 && !o.Vouched(r) {
			r.Header.Del(access.HeaderActor) // only the automation and the boards label acts
		}
		next.ServeHTTP(sw, r)
		sw.finish()
		m.observe(r, sw, start)
	})
}

// readBody reads a body of unknown length (chunked) before anything runs, so
// one over the limit gets 413 on every path (a handler that never reads its
// body, a proxy that fails half-way) instead of running with a cut body or
// answering 502. The handlers then read it from memory, and the front door
// takes it as read (httpx.WithBody); it is at most max_body bytes (1 MiB
// by default). httpx.ReadBody is the one read of a body on a board
// door (docs/DESIGN.md, The front door).
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) (*http.Request, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return r, true
	}
	b, err := httpx.ReadBody(r, maxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpx.Error(w, http.StatusRequestEntityTooLarge, "request body is over the limit of %d bytes", maxBody)
			return r, false
		}
		httpx.Error(w, http.StatusBadRequest, "reading the request body: %v", err)
		return r, false
	}
	return httpx.WithBody(r, b), true
}

// statusWriter records the status and rewrites plain-text error answers
// (http.Error, the mux's 404/405) into the {"error": ...} JSON shape.
type statusWriter struct {
	http.ResponseWriter
	code    int
	convert bool // the next Write is a plain-text error body to turn into JSON
	wrote   bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// An informational answer (100 Continue, 103 Early Hints that a
		// proxied board sent on) is not the final status: pass it on and
		// keep waiting for the real one.
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.code = code
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.convert = true
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.convert {
		w.convert = false
		w.wrote = true
		body, _ := json.Marshal(httpx.ErrorBody{Error: strings.TrimSpace(string(b))})
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Del("Content-Length")
		w.ResponseWriter.WriteHeader(w.code)
		_, err := w.ResponseWriter.Write(append(body, '\n'))
		return len(b), err
	}
	if !w.wrote {
		w.wrote = true
		if w.code == 0 {
			w.code = http.StatusOK
		}
	}
	return w.ResponseWriter.Write(b)
}

// finish sends an error status whose plain-text body never came.
func (w *statusWriter) finish() {
	if w.convert {
		_, _ = w.Write([]byte(http.StatusText(w.code)))
	}
}

// Flush lets SSE handlers stream through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the real writer (write deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
