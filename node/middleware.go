package node

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/dispatch"
)

// wrap puts the front-door guards around the mux: body size limit, JSON
// errors for everything net/http answers in plain text (404, 405, 413 from
// MaxBytesReader), request metrics and the in-flight count.
func (n *Node) wrap(next http.Handler) http.Handler {
	maxBody := n.boot.MaxBody
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		n.web.metrics.inFlight.Add(1)
		defer n.web.metrics.inFlight.Add(-1)
		sw := &statusWriter{ResponseWriter: w}
		r = n.withPersonSigner(r)       // a write of the users or the configuration carries its person's signature
		if n.acc.boards.Refuse(sw, r) { // a revoked board on a connection opened before (node/boardrevoke)
			n.observe(r, sw, start)
			return
		}
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.ContentLength > 0 || len(r.TransferEncoding) > 0) {
			// a read has no body; one that sends one (slowly)
			// is refused before it can hold anything
			sw.Header().Set("Connection", "close")
			httpx.Error(sw, http.StatusBadRequest, "a %s request must not carry a body", r.Method)
			n.observe(r, sw, start)
			return
		}
		maxBody, firmware := maxBody, r.Method == http.MethodPost && (r.URL.Path == firmwarePath || r.URL.Path == "/api/cluster/upgrade")
		if firmware {
			maxBody = MaxFirmwareBytes // streamed to disk by serveFirmware, never buffered
		}
		if maxBody > 0 {
			if r.ContentLength > maxBody {
				httpx.Error(sw, http.StatusRequestEntityTooLarge, "request body of %d bytes is over the limit of %d bytes", r.ContentLength, maxBody)
				n.observe(r, sw, start)
				return
			}
			r.Body = http.MaxBytesReader(sw, r.Body, maxBody)
			if r.ContentLength < 0 && !firmware {
				var ok bool
				if r, ok = readBody(sw, r, maxBody); !ok {
					n.observe(r, sw, start)
					return
				}
			}
		}
		if len(r.Header[HeaderActor]) > 0 && !n.actorVouched(r) {
			r.Header.Del(HeaderActor) // only the automation and the boards label acts (accounts.go)
		}
		next.ServeHTTP(sw, r)
		sw.finish()
		n.observe(r, sw, start)
	})
}

// actorVouched reports whether r may carry HeaderActor: the automation's
// own request (actorDoor, in process), or one a board forwards with a
// dispatch mark (checked by the front door). From anyone else it is
// stripped: the audit log's user is not the client's to write.
func (n *Node) actorVouched(r *http.Request) bool {
	if r.Context().Value(inProcessKey{}) != nil {
		return true
	}
	return r.Header.Get(dispatch.HeaderMark) != "" && n.fromBoard(r)
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

func (n *Node) observe(r *http.Request, sw *statusWriter, start time.Time) {
	code := sw.code
	if code == 0 {
		code = http.StatusOK
	}
	class := pathClass(r.URL.Path)
	n.web.metrics.requests.WithLabelValues(class, codeLabel(code)).Inc()
	n.web.metrics.duration.WithLabelValues(class).Update(time.Since(start).Seconds())
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

// withPersonSigner: a write of the users or the configuration carries its
// person's signature (access.PersonSigner; docs/DESIGN.md, Trust).
func (n *Node) withPersonSigner(r *http.Request) *http.Request {
	if n.acc.acct == nil {
		return r
	}
	var sess access.Sessions
	if n.acc.auth != nil {
		sess = n.acc.auth
	}
	return access.PersonSigner(n.acc.acct.store, n.acc.acct.seed, sess)(r)
}
