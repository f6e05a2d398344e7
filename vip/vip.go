// Package vip holds the cluster's virtual IP on the master: added and removed over netlink, announced by gratuitous ARP.
package vip

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/jonboulle/clockwork"
)

// DefaultGARP is when gratuitous ARPs go out after the address is added,
// counted from the add: at once, then again as keepalived's
// garp_master_repeat does, for switches and clients that missed the first.
var DefaultGARP = []time.Duration{0, 200 * time.Millisecond, time.Second}

// retryWait is how long the manager waits before it tries again a netlink
// call that failed.
const retryWait = time.Second

// Config is the virtual IP of a cluster.
type Config struct {
	// Prefix is the address and its subnet length, e.g. 192.168.1.50/24.
	Prefix netip.Prefix
	// Interface holds the address; "" picks the interface whose subnet
	// contains Prefix's address.
	Interface string
	// GARP overrides DefaultGARP (tests); nil means DefaultGARP.
	GARP []time.Duration
}

// Enabled reports whether a virtual IP is configured.
func (c Config) Enabled() bool { return c.Prefix.IsValid() }

// Addrs adds, removes and finds an address on an interface (netlink on
// Linux; a fake in tests).
type Addrs interface {
	Has(ifindex int, p netip.Prefix) (bool, error)
	Add(ifindex int, p netip.Prefix) error
	Del(ifindex int, p netip.Prefix) error
	Close() error
}

// Announcer sends one gratuitous ARP for ip from ifi.
type Announcer func(ifi *net.Interface, ip netip.Addr) error

// Options are the manager's collaborators; zero values pick the real ones.
type Options struct {
	Registerer *promx.Registry
	Logger     *slog.Logger
	Clock      clockwork.Clock
	Addrs      Addrs     // default: netlink
	Announce   Announcer // default: gratuitous ARP on a raw socket
	// Interface finds the interface; default: net.InterfaceByName or, when
	// Config.Interface is "", the interface whose subnet holds the VIP.
	Interface func(name string, p netip.Prefix) (*net.Interface, error)
	// SkipCapCheck skips the CAP_NET_ADMIN/CAP_NET_RAW check (fakes).
	SkipCapCheck bool
}

// Manager keeps the address on this board exactly while Set(true) holds:
// Run reconciles in its own goroutine, so callers never wait on netlink.
type Manager struct {
	cfg     Config
	ifi     *net.Interface
	log     *slog.Logger
	clock   clockwork.Clock
	addrs   Addrs
	announc Announcer
	m       *metrics

	closeOnce sync.Once

	mu       sync.Mutex
	want     bool
	announce bool // an extra round of gratuitous ARP is asked for
	kick     chan struct{}
	held     bool
}

// New checks what holding the address needs (the capabilities, the
// interface, a netlink socket) and returns an error naming what is missing.
func New(cfg Config, o Options) (*Manager, error) {
	if !cfg.Enabled() {
		return nil, fmt.Errorf("vip: no address configured")
	}
	if !cfg.Prefix.Addr().Is4() {
		return nil, fmt.Errorf("vip: %s: only IPv4 virtual IPs are supported", cfg.Prefix)
	}
	if cfg.GARP == nil {
		cfg.GARP = DefaultGARP
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Interface == nil {
		o.Interface = findInterface
	}
	if !o.SkipCapCheck {
		if err := checkCaps(); err != nil {
			return nil, err
		}
	}
	ifi, err := o.Interface(cfg.Interface, cfg.Prefix)
	if err != nil {
		return nil, err
	}
	if o.Addrs == nil {
		if o.Addrs, err = dialNetlink(); err != nil {
			return nil, err
		}
	}
	if o.Announce == nil {
		o.Announce = gratuitousARP
	}
	return &Manager{
		cfg: cfg, ifi: ifi, log: o.Logger.With("vip", cfg.Prefix.String(), "interface", ifi.Name),
		clock: o.Clock, addrs: o.Addrs, announc: o.Announce, m: newMetrics(o.Registerer),
		kick: make(chan struct{}, 1),
	}, nil
}

// Close releases the netlink socket of a manager that never ran (Run
// closes it itself); the address is left as it is.
func (m *Manager) Close() {
	m.closeOnce.Do(func() { _ = m.addrs.Close() })
}

// Interface is the interface the address goes on.
func (m *Manager) Interface() string { return m.ifi.Name }

// Set asks for the address to be held (true: this board is master) or
// released. It returns at once.
func (m *Manager) Set(want bool) {
	m.mu.Lock()
	m.want = want
	m.mu.Unlock()
	m.poke()
}

// Announce asks for another round of gratuitous ARPs while the address is
// held (a partition healed: clients may have learnt another board's MAC).
func (m *Manager) Announce() {
	m.mu.Lock()
	m.announce = true
	m.mu.Unlock()
	m.poke()
}

// Held reports whether this board holds the address now.
func (m *Manager) Held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

func (m *Manager) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run removes an address left from an earlier life unless Set(true) came
// first, then keeps the address in step with Set until ctx ends, and removes
// it then and returns nil. Failures are logged, counted and retried; they
// never end Run.
func (m *Manager) Run(ctx context.Context) error {
	defer m.Close()
	// The kernel may hold the address from before a crash (kill -9, power
	// loss with a persistent netns): what we hold is what it says.
	held, err := m.addrs.Has(m.ifi.Index, m.cfg.Prefix)
	if err != nil {
		m.fail("list", err)
	}
	m.setHeld(held)
	var garp clockwork.Timer // next gratuitous ARP, nil when none is due
	var garpC <-chan time.Time
	step := 0
	startGARP := func() {
		step = 0
		if garp != nil {
			garp.Stop()
		}
		garp = m.clock.NewTimer(m.cfg.GARP[0])
		garpC = garp.Chan()
	}
	stopGARP := func() {
		if garp != nil {
			garp.Stop()
		}
		garp, garpC = nil, nil
	}
	var retry clockwork.Timer // armed after a failed netlink call
	var retryC <-chan time.Time
	retryLater := func() {
		if retry == nil {
			retry = m.clock.NewTimer(retryWait)
		} else {
			retry.Reset(retryWait)
		}
		retryC = retry.Chan()
	}
	reconcile := func() {
		if retry != nil {
			retry.Stop()
		}
		retryC = nil
		m.mu.Lock()
		want, again := m.want, m.announce
		m.announce = false
		m.mu.Unlock()
		switch {
		case want && !held:
			if err := m.addrs.Add(m.ifi.Index, m.cfg.Prefix); err != nil {
				m.fail("add", err)
				retryLater()
				return
			}
			held = true
			m.setHeld(true)
			m.log.Info("vip: added: this board is master")
			startGARP()
		case !want && held:
			stopGARP()
			if err := m.addrs.Del(m.ifi.Index, m.cfg.Prefix); err != nil {
				m.fail("del", err)
				retryLater()
				return
			}
			held = false
			m.setHeld(false)
			m.log.Info("vip: removed: this board is not master")
		case want && again:
			startGARP()
		}
	}
	reconcile()
	for {
		select {
		case <-ctx.Done():
			stopGARP()
			if retry != nil {
				retry.Stop()
			}
			if held {
				if err := m.addrs.Del(m.ifi.Index, m.cfg.Prefix); err != nil {
					m.fail("del", err)
				} else {
					m.setHeld(false)
					m.log.Info("vip: removed at shutdown")
				}
			}
			return nil
		case <-m.kick:
			reconcile()
		case <-retryC:
			reconcile()
		case <-garpC:
			if err := m.announc(m.ifi, m.cfg.Prefix.Addr()); err != nil {
				m.fail("garp", err)
			} else {
				m.m.garp.Inc()
			}
			step++
			if step < len(m.cfg.GARP) {
				garp.Reset(m.cfg.GARP[step] - m.cfg.GARP[step-1])
			} else {
				stopGARP()
			}
		}
	}
}

// setHeld sets the held flag and its gauge together, so whoever sees
// Held() also sees ews_vip_held agree.
func (m *Manager) setHeld(h bool) {
	v := 0.0
	if h {
		v = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = h
	m.m.held.Set(v)
}

func (m *Manager) fail(op string, err error) {
	m.m.errors.WithLabelValues(op).Inc()
	m.log.Error("vip: "+op+" failed", "err", err)
}
