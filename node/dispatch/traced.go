package dispatch

import (
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// A request that asks for its trace (reqtrace.Header, `ews bench
// --trace`) carries a reqtrace.Trace in its context on every board it
// crosses; each board adds its marks to the answer's header: the entry
// its Enter and Placed before it forwards, the board that runs it its
// Run and the device's marks (hal) before its answer's header goes out.

// traced returns r carrying a trace when it asks for one.
func traced(r *http.Request) *http.Request {
	if !reqtrace.Asked(r) {
		return r
	}
	return r.WithContext(reqtrace.With(r.Context(), &reqtrace.Trace{}))
}

// markPlaced records that t's request was placed and puts this board's
// marks on the answer.
func markPlaced(w http.ResponseWriter, t *reqtrace.Trace) {
	t.Mark(reqtrace.Placed, time.Now())
	t.Flush(w.Header())
}

// runTraced wraps w for a request run here: Run now, and every mark
// recorded until the answer's header goes out.
func runTraced(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	t := reqtrace.From(r.Context())
	if t == nil {
		return w
	}
	t.Mark(reqtrace.Run, time.Now())
	return &traceWriter{ResponseWriter: w, t: t}
}

// traceWriter flushes its trace into the header before it is written.
type traceWriter struct {
	http.ResponseWriter
	t     *reqtrace.Trace
	wrote bool
}

func (tw *traceWriter) WriteHeader(code int) {
	if !tw.wrote && code >= 200 {
		tw.wrote = true
		tw.t.Flush(tw.ResponseWriter.Header())
	}
	tw.ResponseWriter.WriteHeader(code)
}

func (tw *traceWriter) Write(p []byte) (int, error) {
	if !tw.wrote {
		tw.WriteHeader(http.StatusOK)
	}
	return tw.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer below (Flush, deadlines).
func (tw *traceWriter) Unwrap() http.ResponseWriter { return tw.ResponseWriter }
