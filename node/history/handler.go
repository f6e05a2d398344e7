package history

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
)

// Path is the route of the history API.
const Path = "GET /api/devices/{name}/history"

// HandlerOptions are what the handler needs from its board.
type HandlerOptions struct {
	// Store is this board's history; nil answers 503 (history off).
	Store *Store
	// Lookup returns the freshest state this board knows of the device
	// called name (its own, or another board's as mirrored); false: no
	// such device.
	Lookup func(name string) (hal.Snapshot, bool)
	// Local reports whether this board drives the device; a request for
	// another board's device reaches this board only when that board is
	// down (see Pin), and is answered with the mirror's last value and 503.
	Local func(name string) bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// RetryAfter is the Retry-After of a 503; default 5s.
	RetryAfter time.Duration
	// Default span when since is absent; default 24h.
	Span time.Duration
}

// Handler serves GET /api/devices/{name}/history.
type Handler struct{ o HandlerOptions }

// NewHandler returns the handler.
func NewHandler(o HandlerOptions) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 5 * time.Second
	}
	if o.Span <= 0 {
		o.Span = 24 * time.Hour
	}
	return &Handler{o}
}

// Register mounts the handler on mux, through wrap (auth) when not nil.
func (h *Handler) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	var hh http.Handler = h
	if wrap != nil {
		hh = wrap(hh)
	}
	mux.Handle(Path, hh)
}

// Query is a parsed history request.
type Query struct {
	Since, Until time.Time
	Step         time.Duration
	CSV          bool
}

// ParseQuery reads since (a duration back from now, or RFC 3339), until
// (the same; default now), step (a duration) and format (json | csv).
func ParseQuery(q map[string][]string, now time.Time, span time.Duration) (Query, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	out := Query{Since: now.Add(-span), Until: now}
	var err error
	if v := get("since"); v != "" {
		if out.Since, err = parseTime(v, now); err != nil {
			return out, fmt.Errorf("history: since: %w", err)
		}
		if out.Since.After(now) {
			return out, fmt.Errorf("history: since %q is in the future", v)
		}
	}
	if v := get("until"); v != "" {
		if out.Until, err = parseTime(v, now); err != nil {
			return out, fmt.Errorf("history: until: %w", err)
		}
	}
	if out.Until.Before(out.Since) {
		return out, fmt.Errorf("history: until is before since")
	}
	if v := get("step"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return out, fmt.Errorf("history: step %q: want a positive duration such as \"1m\"", v)
		}
		out.Step = d
	}
	switch get("format") {
	case "", "json":
	case "csv":
		out.CSV = true
	default:
		return out, fmt.Errorf("history: format %q: want json or csv", get("format"))
	}
	return out, nil
}

// parseTime reads "1h" (that long before now) or an RFC 3339 time.
func parseTime(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("negative duration %q", v)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (\"24h\") nor an RFC 3339 time", v)
	}
	return t, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	snap, known := h.o.Lookup(name)
	if !known {
		httpx.Error(w, http.StatusNotFound, "history: device %q not found", name)
		return
	}
	now := h.o.Now()
	q, err := ParseQuery(r.URL.Query(), now, h.o.Span)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "%v", err)
		return
	}
	if h.o.Local != nil && !h.o.Local(name) {
		// its board is down (else the request would have been sent there)
		body := struct {
			Series
			Error string `json:"error"`
		}{Series{Name: name, Unit: snap.Unit, Points: []Point{}},
			fmt.Sprintf("history: device %q is on board %q, which does not answer; only its last known value is here", name, snap.Node)}
		if v, ok := LastValue(snap); ok {
			body.Points = append(body.Points, Point{T: snap.Updated.UTC(), V: v})
		}
		httpx.SetRetryAfter(w, h.o.RetryAfter)
		httpx.JSON(w, http.StatusServiceUnavailable, body)
		return
	}
	if h.o.Store == nil {
		httpx.Unavailable(w, h.o.RetryAfter, "history: off on board %q", snap.Node)
		return
	}
	s, _ := h.o.Store.Query(name, q.Since, q.Until, q.Step)
	if s.Unit == "" {
		s.Unit = snap.Unit
	}
	if q.CSV {
		writeCSV(w, s)
		return
	}
	httpx.JSON(w, http.StatusOK, s)
}

// writeCSV writes t,v (and min,mean,max when downsampled), one point a row.
func writeCSV(w http.ResponseWriter, s Series) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", s.Name+"-history.csv"))
	c := csv.NewWriter(w)
	agg := s.Step != ""
	head := []string{"t", "v"}
	if agg {
		head = append(head, "min", "mean", "max")
	}
	_ = c.Write(head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, p := range s.Points {
		row := []string{p.T.Format(time.RFC3339Nano), f(p.V)}
		if agg && p.Min != nil {
			row = append(row, f(*p.Min), f(*p.Mean), f(*p.Max))
		}
		_ = c.Write(row)
	}
	c.Flush()
}

// Pin wraps a Front.Pin: a history request for a device whose board is not
// running is not pinned, so another board answers it from its mirror (the
// last value, 503) instead of the queue refusing it outright.
func Pin(next func(*http.Request) string, running func(board string) bool) func(*http.Request) string {
	return func(r *http.Request) string {
		b := next(r)
		if b == "" || b == "any" || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/history") || running(b) {
			return b
		}
		return ""
	}
}
