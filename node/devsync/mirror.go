// Package devsync mirrors the other boards from their /events?scope=local streams: device state, so any board's UI shows every device live, and their other events (idempotency claims, logouts).
package devsync

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Peer is another board as the cluster table knows it.
type Peer struct {
	Name string
	HTTP string // "host:port" of its HTTP server; "" while unknown
}

// Options tune a Mirror; the zero value gives the defaults.
type Options struct {
	// Client opens the streams; it must have no overall Timeout (a stream
	// lasts). Default: a transport of its own with dial (2s) and
	// response-header (5s) timeouts, closed when Run returns.
	Client *http.Client
	// Header is added to every stream request (a token, say).
	Header http.Header
	// Sign, when set, is called on every stream request with the board
	// it goes to, just before it is sent: the node adds its proof that it
	// is a board of the cluster (a peer mark, node/dispatch).
	Sign func(req *http.Request, board string)
	// TLS, when set, makes the streams HTTPS: the default client dials
	// with it (the cluster CA and this board's certificate) and peers'
	// addresses get https URLs. Nil: plain HTTP.
	TLS    *tls.Config
	Logger *slog.Logger
	// Path is requested on each peer; it must stream only that board's own
	// devices (hal.Devices.Local: node = the board or "any"), a "devices"
	// JSON array on connect (after an "outputs" array: the board's memory
	// of the others' outputs, memory.go), then one "device" per change; serving mirrored
	// state there would let boards echo each other's. Default
	// "/events?scope=local".
	Path string
	// MinBackoff and MaxBackoff bound the wait between two attempts to
	// reach a board; it doubles on each failure, with jitter. A connection
	// that delivered the board's device list and then lived at least
	// MaxBackoff resets it. Default 250ms .. 5s.
	MinBackoff, MaxBackoff time.Duration
	// Grace is how long a board may stay unreachable before its devices
	// show as stale (state "error"). Default 3s: a board restarting its
	// server is not flagged.
	Grace time.Duration
	// Idle drops a stream that sent nothing (not even a ": ping") for this
	// long: a pulled cable sends no RST. Default 45s, three hub pings.
	Idle time.Duration
	// Refresh is how often Run re-reads peers() and checks for stale
	// boards. Default 1s.
	Refresh time.Duration
	// MaxEvent bounds one line and one event's data; a bigger one drops
	// the connection. Default 1 MiB.
	MaxEvent int
	// OnChange is called with each mirrored device whose state changed,
	// stale marks included. Calls never overlap and come in the order the
	// mirror changed; it must be quick (publish to a hub) and may call Get,
	// List or Merge.
	OnChange func(hal.Snapshot)
	// OnEvent is called with every other named event of a board's stream
	// (the device API's "idempotency" claims, say), with the board it came
	// from; the data is only valid during the call. Calls from one board
	// never overlap. Nil: such events are skipped.
	OnEvent func(board, event string, data []byte)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Mirror holds the last known state of every device of the other boards.
// Safe for concurrent use.
//
// Trust: a board is only believed about its own devices. A snapshot whose
// node is neither the board the stream comes from nor "any" is ignored, so a
// board cannot set the state of a device wired to a third board; Merge adds
// that a device only takes the state of the board the local config wires it to.
//
// Stale state: when a board's stream is lost (or the board leaves peers())
// its devices keep their last value and update time for Grace, then show
// state "error" with error "board NAME unreachable" (value and updated kept,
// so a UI can say what was last seen and when); its "any" devices are
// forgotten instead, since other boards still drive them. A new snapshot
// from the board clears the mark.
type Mirror struct {
	self  string
	peers func() []Peer
	opts  Options
	log   *slog.Logger
	own   *http.Transport // the default client's transport, closed by Run

	emit   sync.Mutex // held while changing state and calling OnChange, in that order
	mu     sync.Mutex
	b      map[string]*board
	mem    map[string]hal.Snapshot   // the other boards' outputs at their last command (memory.go)
	offers map[string][]hal.Snapshot // board -> what it remembers of ours
	poke   chan struct{}             // Poke: reconcile now
}

// board is the mirrored state of one board.
type board struct {
	devs      map[string]hal.Snapshot // as the board sent them
	up        bool
	downSince time.Time       // when up went false
	reason    string          // why it went down
	marked    bool            // its devices were marked stale in this down period
	flapping  bool            // its stream broke before it was healthy: stale is logged at debug level
	stale     map[string]bool // devices shown as unreachable until the board reports them again
}

// New returns a mirror for board self; peers lists the boards of the
// cluster (self may be among them and is skipped). Run starts it.
func New(self string, peers func() []Peer, opts Options) *Mirror {
	if opts.Path == "" {
		opts.Path = "/events?scope=local"
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(5*time.Second, opts.MinBackoff)
	}
	if opts.Grace <= 0 {
		opts.Grace = 3 * time.Second
	}
	if opts.Idle <= 0 {
		opts.Idle = 45 * time.Second
	}
	if opts.Refresh <= 0 {
		opts.Refresh = time.Second
	}
	if opts.MaxEvent <= 0 {
		opts.MaxEvent = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Mirror{self: self, peers: peers, opts: opts, log: opts.Logger, b: map[string]*board{},
		mem: map[string]hal.Snapshot{}, offers: map[string][]hal.Snapshot{}, poke: make(chan struct{}, 1)}
	if opts.Client == nil {
		m.own = &http.Transport{
			Proxy:                 nil, // boards talk on the LAN, never through a proxy
			DialContext:           (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 15 * time.Second}).DialContext,
			ResponseHeaderTimeout: 5 * time.Second,
			MaxIdleConnsPerHost:   1,
			IdleConnTimeout:       30 * time.Second,
			TLSClientConfig:       opts.TLS,
			TLSHandshakeTimeout:   5 * time.Second,
		}
		m.opts.Client = &http.Client{Transport: m.own}
	}
	return m
}

// Get returns the mirrored state of the device called name. A device wired
// to one board is found under it; for a shared ("any") device seen by
// several boards, the most recently updated copy wins.
func (m *Mirror) Get(name string) (hal.Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.getLocked(name)
}

func (m *Mirror) getLocked(name string) (hal.Snapshot, bool) {
	var (
		best   hal.Snapshot
		bestBn string
		found  bool
	)
	for bn, b := range m.b {
		s, ok := b.devs[name]
		if !ok {
			continue
		}
		s = b.view(bn, s)
		pinned, bestPinned := s.Node != "any", best.Node != "any"
		newer := s.Updated.After(best.Updated) || (s.Updated.Equal(best.Updated) && bn < bestBn)
		if !found || (pinned && !bestPinned) || (pinned == bestPinned && newer) {
			best, bestBn, found = s, bn, true
		}
	}
	return best, found
}

// List returns every mirrored device once, sorted by name.
func (m *Mirror) List() []hal.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for _, b := range m.b {
		for n := range b.devs {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]hal.Snapshot, 0, len(names))
	for _, n := range names {
		s, _ := m.getLocked(n)
		out = append(out, s)
	}
	return out
}

// Merge returns local (this board's hal.Devices.List, config order kept)
// with each device wired to another board replaced by that board's mirrored
// state when known, and each shared ("any") device replaced by a mirrored
// copy that is newer than this board's own. Devices never heard of keep
// their static "remote" snapshot. local is not modified.
func (m *Mirror) Merge(local []hal.Snapshot) []hal.Snapshot {
	out := slices.Clone(local)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, s := range out {
		switch {
		case s.Node == "any":
			if r, ok := m.getLocked(s.Name); ok && r.Node == "any" && r.Updated.After(s.Updated) {
				out[i] = r
			}
		case s.Node != m.self && s.Node != "":
			b, ok := m.b[s.Node]
			if !ok {
				continue
			}
			if r, ok := b.devs[s.Name]; ok && r.Node == s.Node {
				out[i] = b.view(s.Node, r)
			}
		}
	}
	return out
}

// view is s as shown: marked unreachable while stale.
func (b *board) view(name string, s hal.Snapshot) hal.Snapshot {
	if b.stale[s.Name] {
		s.State = hal.StateError
		s.Error = unreachable(name)
	}
	return s
}

func unreachable(board string) string { return fmt.Sprintf("board %s unreachable", board) }

// accepts tells whether board peer may report s.
func accepts(peer string, s hal.Snapshot) bool {
	return s.Name != "" && (s.Node == peer || s.Node == "any")
}

// replace makes list the whole device set of board bn.
func (m *Mirror) replace(bn string, list []hal.Snapshot) (ignored int) {
	m.emit.Lock()
	defer m.emit.Unlock()
	var changed []hal.Snapshot
	m.mu.Lock()
	b := m.boardLocked(bn)
	old := make(map[string]hal.Snapshot, len(b.devs))
	for n, s := range b.devs {
		old[n] = b.view(bn, s)
	}
	b.stale = nil
	b.devs = make(map[string]hal.Snapshot, len(list))
	for _, s := range list {
		if !accepts(bn, s) {
			ignored++
			continue
		}
		b.devs[s.Name] = s
		m.remember(bn, s)
		if o, ok := old[s.Name]; !ok || !equal(o, s) {
			changed = append(changed, s)
		}
	}
	m.forgetMissing(bn, b.devs)
	m.mu.Unlock()
	m.notify(changed)
	return ignored
}

// update sets one device of board bn; false when bn may not report it.
func (m *Mirror) update(bn string, s hal.Snapshot) bool {
	if !accepts(bn, s) {
		return false
	}
	m.emit.Lock()
	defer m.emit.Unlock()
	m.mu.Lock()
	b := m.boardLocked(bn)
	o, ok := b.devs[s.Name]
	same := ok && !b.stale[s.Name] && equal(o, s)
	b.devs[s.Name] = s
	m.remember(bn, s)
	delete(b.stale, s.Name)
	m.mu.Unlock()
	if !same {
		m.notify([]hal.Snapshot{s})
	}
	return true
}

// setUp records that board bn's stream is up or down, and why.
func (m *Mirror) setUp(bn string, up bool, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setUpLocked(bn, up, reason)
}

func (m *Mirror) setUpLocked(bn string, up bool, reason string) {
	b := m.boardLocked(bn)
	if !up {
		b.reason = reason // the latest, for the stale log
	}
	if b.up == up {
		return
	}
	b.up = up
	if !up {
		b.downSince, b.marked = m.opts.Now(), false
	}
}

// setDown records that board bn's stream ended, why, and whether it was
// flapping (follow).
func (m *Mirror) setDown(bn, reason string, flapping bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.boardLocked(bn).flapping = flapping
	m.setUpLocked(bn, false, reason)
}

// markStale flags the devices of boards down for longer than Grace.
func (m *Mirror) markStale() {
	m.emit.Lock()
	defer m.emit.Unlock()
	var changed []hal.Snapshot
	m.mu.Lock()
	now := m.opts.Now()
	for bn, b := range m.b {
		if b.up || b.marked || now.Sub(b.downSince) < m.opts.Grace {
			continue
		}
		b.marked = true
		names := make([]string, 0, len(b.devs))
		for n, s := range b.devs {
			if s.Node == "any" {
				delete(b.devs, n)
				continue
			}
			names = append(names, n)
		}
		slices.Sort(names)
		if len(names) == 0 {
			continue
		}
		b.stale = make(map[string]bool, len(names))
		for _, n := range names {
			b.stale[n] = true
			changed = append(changed, b.view(bn, b.devs[n]))
		}
		lvl := slog.LevelWarn
		if b.flapping { // "lost" was logged once; the flapping goes on quietly
			lvl = slog.LevelDebug
		}
		m.log.Log(context.Background(), lvl, "devsync: board devices stale", "board", bn, "devices", len(names), "reason", b.reason)
	}
	m.mu.Unlock()
	m.notify(changed)
}

func (m *Mirror) boardLocked(bn string) *board {
	b, ok := m.b[bn]
	if !ok {
		b = &board{devs: map[string]hal.Snapshot{}}
		m.b[bn] = b
	}
	return b
}

// notify calls OnChange for each snapshot; the caller holds emit.
func (m *Mirror) notify(list []hal.Snapshot) {
	if m.opts.OnChange == nil {
		return
	}
	for _, s := range list {
		func() {
			defer func() {
				if p := recover(); p != nil {
					m.log.Error("devsync: OnChange panicked", "device", s.Name, "panic", p)
				}
			}()
			m.opts.OnChange(s)
		}()
	}
}

func equal(a, b hal.Snapshot) bool {
	return a.Name == b.Name && a.Driver == b.Driver && a.Node == b.Node && a.State == b.State &&
		a.Unit == b.Unit && a.Error == b.Error && a.Updated.Equal(b.Updated) &&
		a.Seq == b.Seq && a.Restored == b.Restored &&
		reflect.DeepEqual(a.Value, b.Value) && reflect.DeepEqual(a.Values, b.Values)
}

// peerKey is how Run tells a peer's connection apart: a new address is a new connection.
func peerKey(p Peer) string { return p.Name + "@" + strings.TrimSpace(p.HTTP) }
