// Package events is the server-sent events hub behind GET /events: a full snapshot on connect, then every change.
package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Options tune a Hub; the zero value gives the defaults.
type Options struct {
	Buffer       int           // messages queued per client before it is dropped; default 64
	Ping         time.Duration // keep-alive comment period; default 15s
	WriteTimeout time.Duration // one write to a client; default 10s
	// MaxClients caps the clients connected at once; one more gets 503
	// with Retry-After. Default DefaultMaxClients.
	MaxClients int
	// MaxPerClient caps the clients of one address (httpx.Client) at once;
	// one more gets 429 with Retry-After (docs/NOTES.md, Security:
	// per-client caps). 0: no cap of its own.
	MaxPerClient int
	Logger       *slog.Logger
}

// DefaultMaxClients is the default cap on SSE clients per hub: each holds a
// connection, a goroutine and a 64-frame queue on a small board.
const DefaultMaxClients = 64

// Hub fans events out to SSE clients. Publish never blocks: a client whose
// queue is full is dropped (its browser reconnects and gets a fresh
// snapshot). Safe for concurrent use.
type Hub struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	clients map[*client]struct{}
	per     map[netip.Addr]int // clients per address, with MaxPerClient
	snaps   []snapshot
	closed  bool
}

type snapshot struct {
	event string
	fn    func() any
}

type client struct {
	addr netip.Addr
	ch   chan []byte
	gone chan struct{} // closed when dropped or the hub closes
}

// New returns an empty hub.
func New(opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = 64
	}
	if opts.Ping <= 0 {
		opts.Ping = 15 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = DefaultMaxClients
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Hub{opts: opts, log: opts.Logger, clients: map[*client]struct{}{}, per: map[netip.Addr]int{}}
}

// Snapshot registers fn as the state a new client first receives, as one
// event called event ("devices", "cluster"), in registration order. fn runs
// on every connect and must be safe for concurrent use.
func (h *Hub) Snapshot(event string, fn func() any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.snaps = append(h.snaps, snapshot{event, fn})
}

// Publish sends data (as JSON) as event to every client without blocking.
func (h *Hub) Publish(event string, data any) {
	if h.Clients() == 0 {
		return // nobody listens: skip the encoding (the table changes ~10 times a second)
	}
	frame, err := encode(event, data)
	if err != nil {
		h.log.Error("events: encode", "event", event, "err", err)
		return
	}
	h.mu.Lock()
	dropped := 0
	for c := range h.clients {
		select {
		case c.ch <- frame:
		default:
			h.dropLocked(c)
			dropped++
		}
	}
	h.mu.Unlock()
	if dropped > 0 {
		h.log.Warn("events: dropped slow clients", "count", dropped)
	}
}

// Clients returns how many clients are connected.
func (h *Hub) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// Close disconnects every client and refuses new ones (503).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.clients {
		h.dropLocked(c)
	}
}

func (h *Hub) dropLocked(c *client) {
	if _, ok := h.clients[c]; ok {
		delete(h.clients, c)
		close(c.gone)
		if h.opts.MaxPerClient > 0 {
			if h.per[c.addr]--; h.per[c.addr] <= 0 {
				delete(h.per, c.addr)
			}
		}
	}
}

// errFull: the hub has MaxClients clients; errPerClient: the address
// has MaxPerClient.
var (
	errFull      = errors.New("events: full")
	errPerClient = errors.New("events: too many streams from this address")
)

func (h *Hub) add(addr netip.Addr) (*client, []snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, http.ErrServerClosed
	}
	if len(h.clients) >= h.opts.MaxClients {
		return nil, nil, errFull
	}
	if h.opts.MaxPerClient > 0 {
		if h.per[addr] >= h.opts.MaxPerClient {
			return nil, nil, errPerClient
		}
		h.per[addr]++
	}
	c := &client{addr: addr, ch: make(chan []byte, h.opts.Buffer), gone: make(chan struct{})}
	h.clients[c] = struct{}{}
	return c, append([]snapshot(nil), h.snaps...), nil
}

func (h *Hub) remove(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(c)
}

// ServeHTTP streams events to one client (GET /events) until it leaves, is
// dropped, or the hub closes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, snaps, err := h.add(httpx.Client(r))
	switch {
	case err == errPerClient:
		httpx.SetRetryAfter(w, 5*time.Second)
		httpx.Error(w, http.StatusTooManyRequests, "events: this address has %d event streams open on this board, the most one address may", h.opts.MaxPerClient)
		return
	case err == errFull:
		h.log.Warn("events: client refused: too many event streams", "max", h.opts.MaxClients, "client", r.RemoteAddr)
		httpx.Unavailable(w, 5*time.Second, "events: %d event streams are open on this board, the most it serves; retry later", h.opts.MaxClients)
		return
	case err != nil:
		httpx.Unavailable(w, time.Second, "events: shutting down")
		return
	}
	defer h.remove(c)
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	send := func(b []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	var first bytes.Buffer
	first.WriteString("retry: 2000\n\n")
	for _, s := range snaps {
		frame, err := snapshotFrame(s)
		if err != nil {
			h.log.Error("events: snapshot", "event", s.event, "err", err)
			continue
		}
		first.Write(frame)
	}
	if send(first.Bytes()) != nil {
		return
	}
	ping := time.NewTicker(h.opts.Ping)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.gone:
			return
		case frame := <-c.ch:
			if send(frame) != nil {
				return
			}
		case <-ping.C:
			if send([]byte(": ping\n\n")) != nil {
				return
			}
		}
	}
}

// snapshotFrame runs a snapshot func, recovering a panic into an error.
func snapshotFrame(s snapshot) (frame []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errors.New("snapshot func panicked")
		}
	}()
	return encode(s.event, s.fn())
}

// encode builds one SSE frame; JSON has no raw newlines, so one data line.
func encode(event string, data any) ([]byte, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(event) + len(b) + 16)
	buf.WriteString("event: ")
	buf.WriteString(event)
	buf.WriteString("\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	return buf.Bytes(), nil
}
