package auth

import (
	"context"
	"fmt"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address ip.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 2 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// TestBadTokensLimited: over real HTTP, 200 wrong tokens from one address
// get 429 with Retry-After after the burst, a log line names the address,
// and a second address still gets its 401s and, with the right token, in.
func TestBadTokensLimited(t *testing.T) {
	var logs testutil.Buffer
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a, err := New(Config{Mode: "token", Token: "right"}, Options{FailBurst: 5, FailRate: 1, Now: clock,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	mux.Handle("POST /act", a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	post := func(c *http.Client, path, tok, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	attacker, other := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	counts := map[int]int{}
	for i := range 200 {
		resp := post(attacker, "/act", fmt.Sprintf("guess-%d", i), "")
		counts[resp.StatusCode]++
		if resp.StatusCode == 429 {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Fatalf("429 without a Retry-After: %q", resp.Header.Get("Retry-After"))
			}
		}
	}
	if counts[401] != 5 || counts[429] != 195 {
		t.Fatalf("answers %v, want 5 × 401 then 195 × 429", counts)
	}
	if got := logs.String(); !strings.Contains(got, "client=127.0.0.1") || strings.Count(got, "too many failed") != 1 {
		t.Fatalf("want one rate-limited log line naming the address, got:\n%s", got)
	}
	// even the right token waits: the address is blocked, not the guess
	if resp := post(attacker, "/act", "right", ""); resp.StatusCode != 429 {
		t.Fatalf("right token from the blocked address: %d", resp.StatusCode)
	}
	if resp := post(attacker, "/api/login", "", `{"token":"right"}`); resp.StatusCode != 429 {
		t.Fatalf("login from the blocked address: %d", resp.StatusCode)
	}
	tests := []struct {
		name, path, tok, body string
		want                  int
	}{
		{"other address, wrong token", "/act", "nope", "", 401},
		{"other address, right token", "/act", "right", "", 200},
		{"other address, login", "/api/login", "", `{"token":"right"}`, 200},
	}
	for _, tt := range tests {
		if resp := post(other, tt.path, tt.tok, tt.body); resp.StatusCode != tt.want {
			t.Fatalf("%s: %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	// one token a second comes back
	mu.Lock()
	now = now.Add(1100 * time.Millisecond)
	mu.Unlock()
	if resp := post(attacker, "/act", "right", ""); resp.StatusCode != 200 {
		t.Fatalf("after the bucket refilled: %d", resp.StatusCode)
	}
}

// TestFailLimiterBounded: the limiter tracks at most its size of
// addresses, forgetting the idlest.
func TestFailLimiterBounded(t *testing.T) {
	now := time.Unix(100, 0)
	l := newFailLimiter(1, 2, 3, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	for i := range 10 {
		now = now.Add(time.Millisecond)
		l.fail(netipAddr(t, fmt.Sprintf("10.0.0.%d", i)), "")
	}
	if len(l.m) > 3 {
		t.Fatalf("%d addresses tracked, want at most 3", len(l.m))
	}
}

// TestDummyHashCost: an unknown basic user is compared with a hash of the
// configured users' cost, so it takes as long as a known one.
func TestDummyHashCost(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost+2)
	a, err := New(Config{Mode: "basic", Users: []string{"ann:" + string(hash)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := bcrypt.Cost(a.dummy); c != bcrypt.MinCost+2 {
		t.Fatalf("dummy cost %d, want %d", c, bcrypt.MinCost+2)
	}
	if err := a.checkUser("nobody", "pw"); err == nil {
		t.Fatal("an unknown user was let in")
	}
}

func netipAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// BenchmarkBasicWrongPassword: a wrong password costs the same for a known
// and an unknown user (bcrypt at the users' cost, here the default 10).
func BenchmarkBasicWrongPassword(b *testing.B) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.DefaultCost)
	a, err := New(Config{Mode: "basic", Users: []string{"ann:" + string(hash)}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, user := range []string{"ann", "nobody"} {
		b.Run(user, func(b *testing.B) {
			for b.Loop() {
				if a.checkUser(user, "wrong") == nil {
					b.Fatal("let in")
				}
			}
		})
	}
}

// Behind a NAT an attacker shares with the users, the right credentials
// that nobody guesses still get in while guessing is slowed: a strong
// token, and a session cookie; a basic user whose password is not being
// guessed. On the code before, every one of them got 429 once the address
// was blocked.
func TestRightCredentialsBehindNAT(t *testing.T) {
	strong := strings.Repeat("s", strongToken)
	hash, _ := bcrypt.GenerateFromPassword([]byte("bob-pw"), bcrypt.MinCost)
	annHash, _ := bcrypt.GenerateFromPassword([]byte("ann-pw"), bcrypt.MinCost)
	for _, tc := range []struct {
		name    string
		cfg     Config
		guess   func(r *http.Request, i int)
		right   func(t *testing.T, a *Auth, r *http.Request)
		wantNow int // the right credentials from the blocked address
	}{
		{"strong token", Config{Mode: "token", Token: strong},
			func(r *http.Request, i int) { r.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%d", i)) },
			func(t *testing.T, a *Auth, r *http.Request) { r.Header.Set("Authorization", "Bearer "+strong) }, 200},
		{"weak token", Config{Mode: "token", Token: "right"},
			func(r *http.Request, i int) { r.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%d", i)) },
			func(t *testing.T, a *Auth, r *http.Request) { r.Header.Set("Authorization", "Bearer right") }, 429},
		{"session cookie", Config{Mode: "token", Token: "right"},
			func(r *http.Request, i int) { r.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%d", i)) },
			func(t *testing.T, a *Auth, r *http.Request) {
				id, _ := a.sessions.create(sessionUser{})
				r.AddCookie(&http.Cookie{Name: CookieName, Value: id})
			}, 200},
		{"another basic user", Config{Mode: "basic", Users: []string{"ann:" + string(annHash), "bob:" + string(hash)}},
			func(r *http.Request, i int) { r.SetBasicAuth("ann", fmt.Sprintf("guess-%d", i)) },
			func(t *testing.T, a *Auth, r *http.Request) { r.SetBasicAuth("bob", "bob-pw") }, 200},
		{"the guessed basic user", Config{Mode: "basic", Users: []string{"ann:" + string(annHash), "bob:" + string(hash)}},
			func(r *http.Request, i int) { r.SetBasicAuth("ann", fmt.Sprintf("guess-%d", i)) },
			func(t *testing.T, a *Auth, r *http.Request) { r.SetBasicAuth("ann", "ann-pw") }, 429},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			a, err := New(tc.cfg, Options{FailBurst: 3, FailRate: 0.1, Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			h := a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			serve := func(set func(r *http.Request)) int {
				r := httptest.NewRequest("GET", "/act", nil)
				r.RemoteAddr = "198.51.100.7:4000" // the NAT
				set(r)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code
			}
			codes := map[int]int{}
			for i := range 20 {
				codes[serve(func(r *http.Request) { tc.guess(r, i) })]++
			}
			if codes[401] != 3 || codes[429] != 17 {
				t.Fatalf("guesses answered %v, want 3 × 401 then 17 × 429", codes)
			}
			if got := serve(func(r *http.Request) { tc.right(t, a, r) }); got != tc.wantNow {
				t.Fatalf("the right credentials from the blocked NAT: %d, want %d", got, tc.wantNow)
			}
		})
	}
}

// The limit is cluster-wide: failures one board saw (OnFail, told on its
// stream) count on the others (Failed), so an attacker who spreads guesses
// over the boards is slowed as on one.
func TestFailuresCountClusterWide(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	var told []Failure
	one, err := New(Config{Mode: "token", Token: "right"}, Options{FailBurst: 3, FailRate: 0.1, Now: clock, OnFail: func(f Failure) { told = append(told, f) }})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(Config{Mode: "token", Token: "right"}, Options{FailBurst: 3, FailRate: 0.1, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	guess := func(a *Auth) int {
		r := httptest.NewRequest("GET", "/act", nil)
		r.RemoteAddr = "198.51.100.7:4000"
		r.Header.Set("Authorization", "Bearer wrong")
		w := httptest.NewRecorder()
		a.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
		return w.Code
	}
	for range 3 {
		if c := guess(one); c != 401 {
			t.Fatalf("guess on board one: %d", c)
		}
	}
	if len(told) != 3 || told[0].Client != netip.MustParseAddr("198.51.100.7") {
		t.Fatalf("told %v", told)
	}
	for _, f := range told {
		other.Failed(f)
	}
	if c := guess(other); c != 429 {
		t.Fatalf("the first guess on the other board: %d, want 429 (the cluster saw three)", c)
	}
}
