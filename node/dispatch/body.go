package dispatch

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Defaults of Options.
const (
	DefaultMaxBody     = 1 << 20          // [http] max_body
	DefaultBodyTimeout = 10 * time.Second // a body that takes longer gets 408
)

// readBody is the pipeline's step between authentication and the queue
// (a marked request: before its mark is checked, which may bind the
// body's digest): it reads r's whole body (at most MaxBody bytes, within
// BodyTimeout) into memory once, so a request takes a queue place and a
// board's slot only once it is all here. A client that sends its body a
// byte at a time holds its own connection, never a slot (docs/DESIGN.md,
// The front door).
// Every later step (binding a mark, each forwarding attempt, the hold)
// uses the bytes returned; the request returned carries them
// (httpx.WithBody) for the handlers here. False: answered (400, 408, 413).
func (f *Front) readBody(w http.ResponseWriter, r *http.Request) (*http.Request, []byte, bool) {
	if bodyMode(r) == BodyNone {
		return r, nil, true
	}
	if b, ok := httpx.Body(r); ok {
		return r, b, true // the node's guard read it (a body of unknown length)
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(f.cfg.bodyTimeout)) // not every writer can: then the server's ReadTimeout bounds it
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	b, err := httpx.ReadBody(r, f.cfg.maxBody)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, errorBody{Error: "dispatch: the request body did not arrive within " + f.cfg.bodyTimeout.String() + "; it did not run"})
		return r, nil, false
	case err != nil:
		f.bodyError(w, err)
		return r, nil, false
	}
	return httpx.WithBody(r, b), b, true
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
