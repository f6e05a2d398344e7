package firstrun

import (
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The global limit holds a guesser with many addresses; one IPv6 host's
// /64 counts as one address; a right code clears its address.
func TestGuessesAcrossAddresses(t *testing.T) {
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	g := newGuesses(func() time.Time { return now })
	for i := range globalTries {
		k := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 32)
		if _, ok := g.take(k); !ok {
			t.Fatalf("try %d from its own address refused", i)
		}
	}
	wait, ok := g.take(netip.MustParsePrefix("10.1.0.1/32"))
	if ok || wait != globalWindow {
		t.Fatalf("try %d in the window: ok %v wait %v", globalTries+1, ok, wait)
	}
	now = now.Add(globalWindow)
	if _, ok := g.take(netip.MustParsePrefix("10.1.0.1/32")); !ok {
		t.Fatal("refused in the next window")
	}

	for _, c := range []struct{ remote, want string }{
		{"[2001:db8:1:2:aaaa::1]:5000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:5000", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:5000", "192.0.2.7/32"},
		{"192.0.2.7:5000", "192.0.2.7/32"},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		r.RemoteAddr = c.remote
		if got := key(r); got.String() != c.want {
			t.Errorf("key(%s) = %s, want %s", c.remote, got, c.want)
		}
	}

	g = newGuesses(func() time.Time { return now })
	k := netip.MustParsePrefix("192.0.2.7/32")
	for range freeTries {
		g.take(k)
	}
	if _, ok := g.take(k); ok {
		t.Fatal("a try past the free ones taken at once")
	}
	g.right(k)
	if _, ok := g.take(k); !ok {
		t.Fatal("a right code did not clear its address")
	}
}

// The claim code: 16 symbols of Crockford's alphabet, read back whatever
// the case, dashes and O/0, I/L/1 confusions.
func TestClaimCode(t *testing.T) {
	c, err := newClaim()
	if err != nil || !validClaim(c) {
		t.Fatalf("newClaim = %q %v", c, err)
	}
	for _, c := range []struct {
		typed string
		want  bool
	}{
		{"AB01-CDEF-GH23-JK45", true},
		{"ab01cdefgh23jk45", true},
		{" abo1-cdef-gh23-jk45 ", true},
		{"ABOI-CDEF-GH23-JK45", true},
		{"ABOL-CDEF-GH23-JK45", true},
		{"AB01-CDEF-GH23-JK46", false},
		{"AB01-CDEF-GH23-JK4", false},
		{"", false},
	} {
		if got := claimMatches("AB01CDEFGH23JK45", c.typed); got != c.want {
			t.Errorf("claimMatches(%q) = %v", c.typed, got)
		}
	}
}

// Tries in parallel from one address get no more than the free ones: each
// is counted when taken, before any code is compared.
func TestGuessesInParallel(t *testing.T) {
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	g := newGuesses(func() time.Time { return now })
	k := netip.MustParsePrefix("192.0.2.9/32")
	var wg sync.WaitGroup
	var taken atomic.Int32
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := g.take(k); ok {
				taken.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := taken.Load(); n != freeTries {
		t.Fatalf("%d tries taken at once, want %d", n, freeTries)
	}
}
