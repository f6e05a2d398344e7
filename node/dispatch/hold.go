package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults of the hold of a request a non-master could not hand to the master.
const (
	DefaultMasterWait = 1100 * time.Millisecond // default tmax (1 s) plus one heartbeat
	DefaultReplayMax  = 64 << 10                // device actions and forms; larger bodies stream
	masterPoll        = 5 * time.Millisecond    // how often a held request looks for the next master
)

// replayable keeps r's body in memory when it is small enough to send
// again (each attempt of the hold gets a fresh reader), and reports
// whether the request can be sent again at all. A body over max is
// streamed once: such a request is answered 502 if its first target fails.
func replayable(r *http.Request, max int64) (body []byte, ok bool, err error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil, true, nil
	}
	if r.ContentLength < 0 || r.ContentLength > min(max, MaxDigestBody) {
		return nil, false, nil
	}
	if body, err = readBound(r); err != nil {
		return nil, false, err
	}
	return body, true, nil
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

// rewind gives r a fresh reader over body for the next attempt.
func rewind(r *http.Request, body []byte) {
	if body == nil {
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
}

// holdUntil waits one poll interval for a new master, or until wake is
// closed (this board's queue opened); false once deadline passed or the
// client left.
func holdUntil(ctx context.Context, deadline time.Time, wake <-chan struct{}) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(left, masterPoll))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-wake:
		return true
	}
}

// signal wakes every waiter at once: wait returns a channel that the next
// fire closes.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
