// Package actuate runs a device action through the node's front door, so automations and MQTT get the same classes, queue, auth and idempotency as HTTP.
package actuate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Command is one device action to run.
type Command struct {
	Device string
	Kind   hal.Kind
	Value  float64       // set
	Pulse  time.Duration // pulse
	// Key is the Idempotency-Key: a command with a key the cluster has
	// already run is not run again (its first result is the answer).
	Key string
	// Origin names who sent it in logs and the request's User-Agent
	// ("mqtt", "rule[2]").
	Origin string
}

// Actor runs commands. Safe for concurrent use.
type Actor interface {
	Act(ctx context.Context, c Command) error
}

// Door is an Actor that sends each command as POST
// /api/devices/{name}/{action} into an http.Handler: the node's whole HTTP
// surface, so the command is classified, queued, dispatched to the board
// the device is wired to, and checked like any client's request.
type Door struct {
	h     http.Handler
	token string // bearer token; "" with auth = "none"
}

// NewDoor returns a Door into h that authenticates with token.
func NewDoor(h http.Handler, token string) *Door { return &Door{h: h, token: token} }

// Act runs c and returns an error for any answer but 2xx, with the status
// and the server's error message.
func (d *Door) Act(ctx context.Context, c Command) error {
	q := url.Values{}
	switch c.Kind {
	case hal.Set:
		q.Set("value", strconv.FormatFloat(c.Value, 'f', -1, 64))
	case hal.Pulse:
		q.Set("ms", strconv.FormatInt(c.Pulse.Milliseconds(), 10))
	}
	u := "/api/devices/" + url.PathEscape(c.Device) + "/" + c.Kind.String()
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u, http.NoBody)
	if err != nil {
		return fmt.Errorf("actuate: %s %s: %w", c.Device, c.Kind, err)
	}
	r.RemoteAddr = "127.0.0.1:0"
	r.Host = "localhost"
	r.Header.Set("User-Agent", "ews-"+c.Origin)
	if d.token != "" {
		r.Header.Set("Authorization", "Bearer "+d.token)
	}
	if c.Key != "" {
		r.Header.Set("Idempotency-Key", c.Key)
	}
	w := newRecorder()
	d.h.ServeHTTP(w, r)
	if w.code >= 200 && w.code < 300 {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(w.body.Bytes(), &e)
	if e.Error == "" {
		e.Error = http.StatusText(w.code)
	}
	return &Error{Status: w.code, Msg: e.Error, RetryAfter: w.header.Get("Retry-After")}
}

// Error is a refused command.
type Error struct {
	Status     int
	Msg        string
	RetryAfter string
}

func (e *Error) Error() string { return fmt.Sprintf("actuate: %d %s", e.Status, e.Msg) }

// recorder is the ResponseWriter a command is answered into; bodies of
// device actions are small, and it keeps at most 64 KiB.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *recorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if room := 64<<10 - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}
func (w *recorder) Flush() {}
