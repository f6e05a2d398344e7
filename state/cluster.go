package state

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/hashicorp/memberlist"
)

// Local is what the node tells the cluster about this board. Its methods
// are called from the cluster's goroutine every heartbeat and must be
// quick and safe for concurrent use.
type Local interface {
	InFlight() int     // requests running on this board now
	Completed() uint64 // requests this board has finished since start
	Runstate() Runstate
	Load() Load
}

// HTTPAddrer may be implemented by a Local to give the HTTP address other
// boards reach it at (when the listener picked its port, say). Without it
// the address comes from Config.HTTP, its host filled from Config.Advertise
// or this board's gossip host when it binds a wildcard.
type HTTPAddrer interface {
	HTTPAddr() string
}

// Credentialer may be implemented by a Local to fingerprint its HTTP
// credentials for its reports (ReportMsg.Creds), so every board can tell
// which boards would refuse what the master forwards. 0: unknown.
type Credentialer interface {
	Creds() uint64
}

// Queuer may be implemented by a Local that runs the master's queue: its
// depth and dispatched count per class, with ok false while this board is
// not master (a follower shows the ones the master's tables carry). It is
// asked on the cluster's goroutine every heartbeat and must be quick.
type Queuer interface {
	QueueStats() (depth map[string]int, dispatched map[string]uint64, ok bool)
}

// Cluster is this board's member of the cluster: memberlist membership and
// transport, the Election, and the table view the node serves.
type Cluster struct {
	cfg    Config
	logger *slog.Logger
	local  Local
	m      *metrics
	self   Peer
	peers  []Peer
	timing Timing
	// keyring holds the gossip keys (keyring.go); nil: gossip unencrypted
	keyring *memberlist.Keyring
	http    string // derived HTTP address, when Local has none
	// literal maps peers whose configured gossip host is an IP to their
	// address, so messages reach them even while out of the membership.
	literal map[string]string

	queuer Queuer // the Local's, or nil

	revokedFn atomic.Pointer[func(string) bool] // the revoked boards (revoked.go)

	// seal is the board's identity on the gossip (invariant 11, sealing.go)
	seal sealing
	// mem is the gossip membership as memberlist reports it (members.go)
	mem membership

	// clock is the board's (Config.Clock); clocks the peers' measured
	// offsets, from the acks of memberlist's probes (clocks.go).
	clock  *clock.Clock
	clocks clocks

	mu    sync.Mutex // guards e, subs
	e     *Election
	subs  map[int]func(View)
	subID int

	inbox        chan received
	warned       map[string]time.Time // Warn reasons logged recently (run goroutine only)
	loadPanicked atomic.Bool          // Local.Load has panicked (warned once)

	relay relaying // a relayed cluster's gossip queue and numbering (relaywire.go)

	near nearMeta // 003's scheme 3: the boards' nearest client networks (clientnets.go)

	life lifecycle // Run's: once, started, or crashed (tests)
}

// received is a decoded message and the protocol version it came at.
type received struct {
	m Message
	v uint8
}

type memberEvent struct {
	name string
	up   bool
}

// New builds the cluster member from cfg (start from DefaultConfig); it
// binds nothing and starts no goroutine until Run. reg may be nil (no metrics registered).
func New(cfg Config, logger *slog.Logger, reg *promx.Registry, local Local) (*Cluster, error) {
	if local == nil {
		return nil, errors.New("state: New needs a Local")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, logger: logger.With("component", "cluster"), local: local, m: m,
		subs: map[int]func(View){}, inbox: make(chan received, 1024), mem: membership{events: make(chan memberEvent, 256), addrs: map[string]string{}, vers: map[string]uint8{}},
		warned: map[string]time.Time{}, life: lifecycle{up: make(chan struct{})},
		seal: sealing{asks: map[string]ask{}, introOut: make(chan introOut, 64), askOut: make(chan askReq, 16)}}
	c.queuer, _ = local.(Queuer)
	c.timing = Timing{Heartbeat: cfg.Heartbeat, TMax: cfg.TMax, TThreshold: cfg.TThreshold, Preempt: cfg.Preempt}
	c.timing.Tick = min(max(c.timing.Heartbeat/4, 5*time.Millisecond), 50*time.Millisecond)

	if cfg.Standalone() {
		c.peers = []Peer{{Rank: 0, Name: cfg.Name, Addr: cfg.Gossip}}
	} else {
		c.peers = append([]Peer(nil), cfg.Peers...)
		if len(cfg.Key) > 0 && !cfg.Insecure {
			if c.keyring, err = memberlist.NewKeyring(cfg.Keys, cfg.Key); err != nil {
				return nil, fmt.Errorf("state: cluster key: %w", err)
			}
		}
	}
	c.e, err = NewElection(cfg.Name, c.peers, c.timing, time.Now())
	if err != nil {
		return nil, err
	}
	for _, p := range c.peers {
		if p.Name == cfg.Name {
			c.self = p
		}
	}
	c.e.HostOK = c.hostOK
	if c.clock = cfg.Clock; c.clock == nil {
		c.clock = clock.Real()
	}
	c.clocks.stepped = c.clock.Stepped
	c.seal.proto = cfg.ProtocolVersion
	var roots *x509.CertPool
	if cfg.Identity != nil && !cfg.Standalone() {
		if c.seal.gkey, err = NewGossipKey(cfg.Name, cfg.Identity, time.Now()); err != nil {
			return nil, err
		}
		roots = cfg.Identity.Roots
		c.seal.askSeals = func(ctx context.Context, name, addr string) (bool, error) {
			return askSeals(ctx, roots, name, addr, c.clock.Now())
		}
	} else {
		c.seal.proto = min(c.seal.proto, ProtocolVersionUnsigned)
	}
	peerSet := map[string]bool{}
	for _, p := range c.peers {
		peerSet[p.Name] = true
	}
	c.seal.keys = NewGossipKeys(cfg.Name, c.seal.gkey, roots, func(name string) bool { return peerSet[name] })
	if c.seal.gkey != nil && cfg.SealedFile != "" {
		if err := c.seal.keys.Remember(cfg.SealedFile); err != nil {
			return nil, err
		}
	}
	c.e.Proto = c.seal.proto
	c.e.Relay = c.e.Relay || cfg.relay
	if c.e.Relay {
		c.relay.boot = uint64(time.Now().UnixNano())
		c.relay.q = newRelayQueue(func() int {
			if ml := c.mem.ml.Load(); ml != nil {
				return ml.NumMembers()
			}
			return len(c.peers)
		})
	}
	c.http = AdvertiseHTTP(cfg.Advertise, c.self.Addr, cfg.HTTP)
	c.literal = map[string]string{}
	for _, p := range c.peers {
		if host, _, err := net.SplitHostPort(p.Addr); err == nil && net.ParseIP(host) != nil {
			c.literal[p.Name] = p.Addr
		}
	}
	return c, nil
}

// AdvertiseHTTP is the address other boards reach listen (an HTTP listener
// address) at: a wildcard host becomes advertise, else the host of
// gossip, else 127.0.0.1.
func AdvertiseHTTP(advertise, gossip, listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host != "" && host != "0.0.0.0" && host != "::" {
		return listen
	}
	host = advertise
	if host == "" {
		host, _, _ = net.SplitHostPort(gossip)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// Run binds the gossip address, joins the configured peers (and keeps
// re-joining missing ones) and runs the protocol until ctx ends. Then it
// hands mastership over (a step-down, so the next board takes over without
// waiting tmax), leaves the membership, shuts memberlist down and returns
// nil, once every goroutine it started has returned. Standalone boards bind
// nothing. A gossip address that is taken is returned at once, naming the
// port. Run may be called once; the cluster's views (Snapshot, Master)
// stay readable before and after it.
func (c *Cluster) Run(ctx context.Context) error {
	if !c.life.ran.CompareAndSwap(false, true) {
		return errors.New("state: cluster already ran")
	}
	var filter sync.WaitGroup // the transport's packet filter, down with memberlist
	defer filter.Wait()
	if c.cfg.Standalone() {
		c.logger.Info("standalone: no peers, this board is master")
	} else if err := c.open(&filter); err != nil {
		return err
	}
	c.mu.Lock()
	c.e.boot = time.Now() // listen tmax from when gossip listens, not from New (invariant 1): a slow start ate it
	c.mu.Unlock()
	close(c.life.up)

	var loops sync.WaitGroup // each returns when ctx ends
	loops.Go(func() { c.run(ctx) })
	if c.cfg.TimeSource != nil {
		loops.Go(func() { c.ntpLoop(ctx) })
	}
	if c.mem.ml.Load() != nil {
		loops.Go(func() { c.rejoin(ctx) })
		if c.seal.gkey != nil {
			loops.Go(func() { c.introLoop(ctx) })
			loops.Go(func() { c.askLoop(ctx) })
		}
	}
	loops.Wait()
	c.leave()
	return nil
}

// open starts memberlist over the filtering transport; the filter's
// goroutine is counted in filter and returns once the transport is down.
func (c *Cluster) open(filter *sync.WaitGroup) error {
	mc, err := memberlistConfig(c.cfg, c.self, c.keyring, &mlLog{logger: c.logger, refused: c.refused})
	if err != nil {
		return err
	}
	d := &delegate{c: c}
	mc.Delegate, mc.Events, mc.Conflict, mc.Alive = d, d, d, d
	mc.Ping = pinger{c: c} // boards measure each other's clocks (clocks.go)
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{mc.BindAddr}, BindPort: mc.BindPort, Logger: mc.Logger})
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			return fmt.Errorf("state: gossip address %s (node.gossip): port %d is already in use (another ews running?): %w", c.cfg.Gossip, mc.BindPort, err)
		}
		return fmt.Errorf("state: start gossip on %s (port %d): %w", c.cfg.Gossip, mc.BindPort, err)
	}
	if mc.BindPort == 0 {
		mc.BindPort = nt.GetAutoBindPort()
		if mc.AdvertisePort == 0 {
			mc.AdvertisePort = mc.BindPort
		}
	}
	ct := &countingTransport{NetTransport: nt, sent: c.m.wire.Add, packets: make(chan *memberlist.Packet), stop: make(chan struct{}), down: make(chan struct{})}
	src := newSources(c.peers)
	filter.Go(func() { ct.filterPackets(c, src) })
	mc.Transport = ct
	// memberlist delivers messages (NotifyMsg) from its own goroutines
	// before Create returns: c.mem.ml is nil until then, and every send checks.
	ml, err := memberlist.Create(mc)
	if err != nil {
		_ = ct.Shutdown()
		return fmt.Errorf("state: start gossip on %s (port %d): %w", c.cfg.Gossip, mc.BindPort, err)
	}
	c.mem.ml.Store(ml)
	c.logger.Info("gossip started", "addr", ml.LocalNode().Address(), "encrypted", mc.Keyring != nil, "signed", c.seal.gkey != nil,
		"peers", len(c.peers), "probe_interval", mc.ProbeInterval, "tmax", c.timing.TMax, "heartbeat", c.timing.Heartbeat)
	c.logIdentity()
	return nil
}

// leave ends Run's protocol: a step-down and a leave, unless crashed
// (tests) asked to stop as a killed process would; then memberlist and its
// transport shut down.
func (c *Cluster) leave() {
	ml := c.mem.ml.Load()
	if !c.life.crashed.Load() {
		c.mu.Lock()
		acts := c.e.StepDown(time.Now())
		c.mu.Unlock()
		c.do(acts)
		if ml != nil {
			if err := ml.Leave(min(c.timing.TMax, time.Second)); err != nil {
				c.logger.Debug("leave", "err", err)
			}
		}
	}
	if ml != nil {
		if err := ml.Shutdown(); err != nil {
			c.logger.Warn("gossip shutdown", "err", err)
		}
	}
}

// Up is closed once Run has bound the gossip address and runs the
// protocol (at once on a standalone board); it stays open when Run failed
// to start.
func (c *Cluster) Up() <-chan struct{} { return c.life.up }

// Snapshot returns the table as this board sees it: the /api/cluster JSON.
// The master fills Queue and Completed from its own queue; a follower shows
// the ones the master's last table carried.
func (c *Cluster) Snapshot() View {
	c.mu.Lock()
	v := c.e.View(time.Now())
	master := c.e.IsMaster()
	c.mu.Unlock()
	if master {
		v.Queue, v.Completed = nil, nil
		if c.queuer != nil {
			if q, done, ok := c.queuer.QueueStats(); ok {
				v.Queue, v.Completed = q, done
			}
		}
	}
	if v.Queue == nil {
		v.Queue = map[string]int{}
	}
	c.markClientNets(v.Nodes)
	return v
}

// IsMaster reports whether this board is the master now.
func (c *Cluster) IsMaster() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.e.IsMaster()
}

// Master returns the master's name and HTTP address; ok is false while no
// master is known (at start, or during a takeover). httpAddr is "" until
// the master's first report arrives (it sends one to each board it hears
// appear).
func (c *Cluster) Master() (name, httpAddr string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, _ = c.e.Master()
	if name == "" {
		return "", "", false
	}
	if name == c.self.Name {
		return name, c.httpAddr(), true
	}
	rep, _, _ := c.e.Report(name)
	return name, rep.HTTP, true
}

// OnChange calls fn with the new view whenever the epoch, the master or
// the table version changes. fn runs on the cluster's goroutine and must
// not block. The returned func unsubscribes.
func (c *Cluster) OnChange(fn func(View)) (cancel func()) {
	c.mu.Lock()
	id := c.subID
	c.subID++
	c.subs[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// Subscribe returns a channel that always holds the latest changed view
// (older ones are dropped, so a slow reader never blocks the cluster).
func (c *Cluster) Subscribe() (<-chan View, func()) {
	ch := make(chan View, 1)
	var mu sync.Mutex
	cancel := c.OnChange(func(v View) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-ch:
		default:
		}
		ch <- v
	})
	return ch, cancel
}

func (c *Cluster) httpAddr() string {
	if h, ok := c.local.(HTTPAddrer); ok {
		if a := h.HTTPAddr(); a != "" {
			return a
		}
	}
	return c.http
}

func (c *Cluster) refused(kind string) { c.m.refused.WithLabelValues(kind).Inc() }

// memberAddrs copies the live members' addresses. (memberlist's Members()
// hands out nodes it keeps writing to; the copies are taken in its event
// callbacks, under its lock.)
func (c *Cluster) memberAddrs() map[string]string {
	c.mem.mu.Lock()
	defer c.mem.mu.Unlock()
	return maps.Clone(c.mem.addrs)
}

// countingTransport counts every UDP byte memberlist sends: our messages
// and its own probes and gossip, after encryption.
type countingTransport struct {
	*memberlist.NetTransport
	sent    func(int)
	packets chan *memberlist.Packet // filtered (filterPackets)
	stop    chan struct{}           // closed by Shutdown: the filter only drains from then on
	down    chan struct{}           // closed once the transport is down: the filter returns
	once    sync.Once
}

// PacketCh is the filtered packet channel.
func (t *countingTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }

// Shutdown stops the filter and the transport. The transport's UDP
// listener blocks on handing each packet over, and its Shutdown waits for
// that listener: so the filter keeps draining (and dropping) packets until
// the transport is down, or the two would wait on each other for ever.
func (t *countingTransport) Shutdown() error {
	var err error
	t.once.Do(func() {
		close(t.stop)
		err = t.NetTransport.Shutdown()
		close(t.down)
	})
	return err
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.sent(len(b))
	return t.NetTransport.WriteTo(b, addr)
}

func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.sent(len(b))
	return t.NetTransport.WriteToAddress(b, a)
}

// lifecycle is where a Cluster is in its one Run.
type lifecycle struct {
	ran     atomic.Bool   // Run was called: it runs once
	up      chan struct{} // closed once Run has started the protocol
	crashed atomic.Bool   // tests only: Run ends without a step-down or leave, as a killed process would
}
