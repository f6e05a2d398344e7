package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxBody     = 1 << 20          // [http] max_body
	DefaultBodyTimeout = 10 * time.Second // a body that takes longer gets 408
)

// ReadBody is the one read of a request body at the front door (the
// node's guard for bodies of unknown length calls it too): at most limit
// bytes, else a *http.MaxBytesError. r.Body is closed; it is not replaced
// (WithBody does that, once).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	return b, nil
}

type bodyKey struct{}

// WithBody is r with its body b, read by ReadBody: r's handlers read b, and
// the Front takes b as read instead of reading it again.
func WithBody(r *http.Request, b []byte) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	return r
}

// readBody is the pipeline's step between authentication and the queue
// (a marked request: before its mark is checked, which may bind the
// body's digest): it reads r's whole body (at most MaxBody bytes, within
// BodyTimeout) into memory once, so a request takes a queue place and a
// board's slot only once it is all here. A client that sends its body a
// byte at a time holds its own connection, never a slot (issue 23, H3).
// Every later step (binding a mark, each forwarding attempt, the hold)
// uses the bytes returned; r gets a reader over them for the handlers
// here. False: answered (400, 408, 413).
func (f *Front) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if bodyMode(r) == BodyNone {
		return nil, true
	}
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return b, true // the node's guard read it (a body of unknown length)
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(f.cfg.bodyTimeout)) // not every writer can: then the server's ReadTimeout bounds it
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	b, err := ReadBody(r, f.cfg.maxBody)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, errorBody{Error: "dispatch: the request body did not arrive within " + f.cfg.bodyTimeout.String() + "; it did not run"})
		return nil, false
	case err != nil:
		f.bodyError(w, err)
		return nil, false
	}
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	return b, true
}

// bodyError answers a body that could not be read: 413 over the limit, else 400.
func (f *Front) bodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("dispatch: request body is over the limit of %d bytes", tooBig.Limit)})
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "dispatch: ") {
		msg = "dispatch: reading the request body: " + msg
	}
	writeJSON(w, http.StatusBadRequest, errorBody{Error: msg})
}
