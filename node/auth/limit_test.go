package auth

import (
	"bytes"
	"context"
	"fmt"
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

// lockedBuf is a log sink safe for the server's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

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
	var logs lockedBuf
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
		l.fail(netipAddr(t, fmt.Sprintf("10.0.0.%d", i)))
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
