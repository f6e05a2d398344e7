package vip

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/jonboulle/clockwork"
)

// fakeAddrs is the kernel's address list of one interface.
type fakeAddrs struct {
	mu      sync.Mutex
	has     map[netip.Prefix]bool
	failAdd int // the next failAdd Add calls fail
	adds    int
	dels    int
	closed  bool
}

func (f *fakeAddrs) Has(_ int, p netip.Prefix) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.has[p], nil
}

func (f *fakeAddrs) Add(_ int, p netip.Prefix) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adds++
	if f.failAdd > 0 {
		f.failAdd--
		return errors.New("operation not permitted")
	}
	f.has[p] = true
	return nil
}

func (f *fakeAddrs) Del(_ int, p netip.Prefix) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dels++
	delete(f.has, p)
	return nil
}

func (f *fakeAddrs) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeAddrs) holds(p netip.Prefix) bool {
	h, _ := f.Has(0, p)
	return h
}

// fakeARP counts the announcements.
type fakeARP struct {
	mu   sync.Mutex
	sent []netip.Addr
}

func (f *fakeARP) announce(_ *net.Interface, ip netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, ip)
	return nil
}

func (f *fakeARP) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

var testVIP = netip.MustParsePrefix("10.9.0.50/24")

type rig struct {
	m      *Manager
	addrs  *fakeAddrs
	arp    *fakeARP
	clock  *clockwork.FakeClock
	reg    *promx.Registry
	cancel context.CancelFunc
	done   chan struct{}
}

func newRig(t *testing.T, stale bool) *rig {
	t.Helper()
	r := newStoppedRig(t, stale)
	r.start()
	return r
}

// newStoppedRig builds the manager; start runs it.
func newStoppedRig(t *testing.T, stale bool) *rig {
	t.Helper()
	r := &rig{addrs: &fakeAddrs{has: map[netip.Prefix]bool{}}, arp: &fakeARP{}, clock: clockwork.NewFakeClock(), reg: promx.NewRegistry()}
	if stale {
		r.addrs.has[testVIP] = true
	}
	m, err := New(Config{Prefix: testVIP, Interface: "eth0"}, Options{
		Registerer: r.reg, Logger: testutil.Logger(), Clock: r.clock, Addrs: r.addrs, Announce: r.arp.announce,
		Interface: func(name string, _ netip.Prefix) (*net.Interface, error) {
			return &net.Interface{Index: 2, Name: name}, nil
		},
		SkipCapCheck: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	t.Cleanup(r.stop)
	return r
}

func (r *rig) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); r.m.Run(ctx) }()
}

func (r *rig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
}

// advanceTo moves the fake clock on to d after the add, one GARP step at a
// time, waiting for the manager to have armed its timer.
func (r *rig) advance(t *testing.T, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("no timer armed: %v", err)
	}
	r.clock.Advance(d)
}

func TestStaleAddressRemovedAtStart(t *testing.T) {
	r := newRig(t, true)
	testutil.Eventually(t, "stale VIP removed", func() bool { return !r.addrs.holds(testVIP) })
	if r.m.Held() {
		t.Fatal("Held() true after removing the stale address")
	}
	if r.arp.count() != 0 {
		t.Fatalf("%d gratuitous ARPs from a board that is not master", r.arp.count())
	}
}

func TestMasterHoldsAndAnnounces(t *testing.T) {
	r := newRig(t, false)
	r.m.Set(true)
	testutil.Eventually(t, "VIP added", func() bool { return r.addrs.holds(testVIP) && r.m.Held() })
	testutil.Eventually(t, "first GARP at once", func() bool { return r.arp.count() == 1 })
	r.advance(t, 200*time.Millisecond)
	testutil.Eventually(t, "second GARP at 200ms", func() bool { return r.arp.count() == 2 })
	r.advance(t, 800*time.Millisecond)
	testutil.Eventually(t, "third GARP at 1s", func() bool { return r.arp.count() == 3 })
	// the counter follows the send it counts: wait for it too
	testutil.Eventually(t, "ews_vip_garp_sent_total = 3", func() bool { return r.m.m.garp.Get() == 3 })
	if got := float64(r.m.m.held.Get()); got != 1 {
		t.Fatalf("ews_vip_held = %v, want 1", got)
	}

	// A healed partition asks for another round.
	r.m.Announce()
	testutil.Eventually(t, "re-announced", func() bool { return r.arp.count() == 4 })

	r.m.Set(false)
	testutil.Eventually(t, "VIP removed on stepping down", func() bool { return !r.addrs.holds(testVIP) && !r.m.Held() })
	if got := float64(r.m.m.held.Get()); got != 0 {
		t.Fatalf("ews_vip_held = %v after stepping down, want 0", got)
	}
	// The rest of the re-announce round is cancelled with the address.
	r.clock.Advance(2 * time.Second)
	r.m.Announce() // ignored: not held
	r.m.Set(false)
	testutil.Eventually(t, "settled", func() bool { return len(r.m.kick) == 0 })
	if n := r.arp.count(); n != 4 {
		t.Fatalf("%d gratuitous ARPs after stepping down, want 4", n)
	}
}

func TestShutdownRemovesAddress(t *testing.T) {
	r := newRig(t, false)
	r.m.Set(true)
	testutil.Eventually(t, "VIP added", func() bool { return r.addrs.holds(testVIP) })
	r.stop()
	if r.addrs.holds(testVIP) {
		t.Fatal("VIP still held after Run returned")
	}
	r.addrs.mu.Lock()
	closed := r.addrs.closed
	r.addrs.mu.Unlock()
	if !closed {
		t.Fatal("netlink socket not closed")
	}
}

func TestAddFailureIsCountedAndRetried(t *testing.T) {
	// Set before Run: the first reconcile and the pending kick both try and
	// fail; then only the retry timer tries again.
	r := newStoppedRig(t, false)
	r.addrs.failAdd = 3
	r.m.Set(true)
	r.start()
	testutil.Eventually(t, "two adds failed", func() bool {
		return float64(r.m.m.errors.WithLabelValues("add").Get()) == 2
	})
	if r.m.Held() {
		t.Fatal("Held() after a failed add")
	}
	r.advance(t, retryWait)
	testutil.Eventually(t, "retried add failed", func() bool {
		return float64(r.m.m.errors.WithLabelValues("add").Get()) == 3
	})
	r.advance(t, retryWait)
	testutil.Eventually(t, "third add holds", func() bool { return r.m.Held() && r.addrs.holds(testVIP) })
}

func TestMetricsLint(t *testing.T) {
	r := newRig(t, false)
	r.m.m.errors.WithLabelValues("add")
	for _, p := range promx.Lint(r.reg) {
		t.Errorf("lint %s", p)
	}
}

func TestNewRefuses(t *testing.T) {
	opts := Options{SkipCapCheck: true, Addrs: &fakeAddrs{}, Interface: findInterface}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"none", Config{}, "no address"},
		{"ipv6", Config{Prefix: netip.MustParsePrefix("fd00::50/64"), Interface: "lo"}, "only IPv4"},
		{"no such interface", Config{Prefix: testVIP, Interface: "nosuch0"}, `interface "nosuch0"`},
		{"not inferable", Config{Prefix: netip.MustParsePrefix("198.18.77.50/24")}, "set cluster.vip_interface"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCapsMissing(t *testing.T) {
	for _, tc := range []struct {
		name, status, want string
	}{
		{"root", "Name:\tews\nCapEff:\t000001ffffffffff\n", ""},
		{"both", "CapEff:\t0000000000003000\n", ""},
		{"none", "CapEff:\t0000000000000000\n", "CAP_NET_ADMIN and CAP_NET_RAW"},
		{"raw only", "CapEff:\t0000000000002000\n", "needs CAP_NET_ADMIN:"},
		{"admin only", "CapEff:\t0000000000001000\n", "needs CAP_NET_RAW:"},
		{"garbled", "CapEff:\tzz\n", "bad CapEff"},
		{"absent", "Name:\tews\n", "no CapEff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := capsMissing(tc.status)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
