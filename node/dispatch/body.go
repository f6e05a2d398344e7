package dispatch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxBody     = 1 << 20          // [http] max_body
	DefaultBodyTimeout = 10 * time.Second // a body that takes longer gets 408
)

// readBody is the pipeline's step between authentication and the queue:
// it reads r's whole body (at most MaxBody bytes, within BodyTimeout) into
// memory, so a request takes a queue place and a board's slot only once
// it is all here. A client that sends its body a byte at a time holds its
// own connection, never a slot (issue 23, H3). False: answered (400, 408,
// 413).
func (f *Front) readBody(w http.ResponseWriter, r *http.Request) bool {
	if bodyMode(r) == BodyNone {
		return true
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(f.bodyTimeout)) // not every writer can: then the server's ReadTimeout bounds it
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	b, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
	_ = r.Body.Close()
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, errorBody{Error: "dispatch: the request body did not arrive within " + f.bodyTimeout.String() + "; it did not run"})
		return false
	case err != nil:
		f.bodyError(w, err)
		return false
	case int64(len(b)) > f.maxBody:
		f.bodyError(w, &http.MaxBytesError{Limit: f.maxBody})
		return false
	}
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	return true
}
