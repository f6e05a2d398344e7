package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// kdfUsers stands for the users store: one user, and a password check
// that takes a slot of two (as the store's argon2id runs) for a while.
type kdfUsers struct {
	slots chan struct{}
	cost  time.Duration
}

func (u *kdfUsers) Token(string) (any, string, uint64, bool) { return nil, "", 0, false }
func (u *kdfUsers) Session(string, uint64) (any, bool)       { return nil, false }
func (u *kdfUsers) Password(name, pw string) (any, uint64, bool) {
	u.slots <- struct{}{}
	defer func() { <-u.slots }()
	time.Sleep(u.cost) // the KDF's time, not a wait for a condition
	return name, 1, name == "ann" && pw == "right password"
}

// TestLoginUnderFlood: 1,600 password logins from 8 addresses whose
// clients leave at once do not keep a real login from a ninth address
// waiting behind their hashes, nor get it a 429.
func TestLoginUnderFlood(t *testing.T) {
	users := &kdfUsers{slots: make(chan struct{}, 2), cost: 5 * time.Millisecond}
	a, err := New(Config{Mode: "token", Token: "flood-test-bundle-token-0123456789abcdef"}, Options{Users: users, Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	login := func(ctx context.Context, client, user, pw string) *httptest.ResponseRecorder {
		r := httptest.NewRequestWithContext(ctx, "POST", "/api/login", strings.NewReader(fmt.Sprintf(`{"user":%q,"password":%q}`, user, pw)))
		r.Header.Set("Content-Type", "application/json")
		r = httpx.WithClient(r, netip.MustParseAddr(client))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	var flood sync.WaitGroup
	var started sync.WaitGroup
	const n = 1600
	started.Add(n)
	for i := range n {
		flood.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Millisecond, cancel) // the client leaves
			started.Done()
			login(ctx, fmt.Sprintf("10.0.0.%d", 1+i%8), fmt.Sprintf("user%d", i%50), "guess")
		})
	}
	started.Wait()
	done := make(chan *httptest.ResponseRecorder, 1)
	start := time.Now()
	go func() { done <- login(context.Background(), "10.0.1.1", "ann", "right password") }()
	select {
	case w := <-done:
		t.Logf("real login behind %d abandoned ones: %d in %v", n, w.Code, time.Since(start))
		if w.Code != http.StatusOK {
			t.Errorf("real login: %d %s, want 200", w.Code, w.Body)
		}
	case <-time.After(5 * time.Second): // a bound on a hang, not a figure: the figure is logged
		t.Errorf("real login not answered in 5 s behind %d abandoned ones", n)
	}
	flood.Wait()
}

// countUsers counts password checks; each waits for release.
type countUsers struct {
	kdfUsers
	mu      sync.Mutex
	checked int
	release chan struct{}
}

func (u *countUsers) Password(name, pw string) (any, uint64, bool) {
	u.mu.Lock()
	u.checked++
	u.mu.Unlock()
	<-u.release
	return nil, 0, false
}

// TestFailuresCountedBeforeTheHash: wrong passwords checked at the same
// time cannot all pass the limit (it used to be asked before and counted
// after each hash): past the burst they get 429 without a hash.
func TestFailuresCountedBeforeTheHash(t *testing.T) {
	users := &countUsers{release: make(chan struct{})}
	a, err := New(Config{Mode: "token", Token: "flood-test-bundle-token-0123456789abcdef"}, Options{Users: users, FailBurst: 2, FailRate: 0.01, Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	codes := make(chan int, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"user":"ann","password":"guess"}`))
			r = httpx.WithClient(r, netip.MustParseAddr("10.0.0.9"))
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			codes <- w.Code
		})
	}
	var once sync.Once
	release := func() { once.Do(func() { close(users.release) }) }
	defer wg.Wait()
	defer release()
	refused := 0
	for refused < 6 { // 8 attempts, a burst of 2: six answered 429 while two hash
		select {
		case c := <-codes:
			if c != http.StatusTooManyRequests {
				t.Fatalf("an attempt answered %d before the two hashing ones", c)
			}
			refused++
		case <-time.After(5 * time.Second): // a bound on a hang
			t.Fatalf("%d of 8 attempts answered 429 while the others hash; want 6", refused)
		}
	}
	release()
	wg.Wait()
	users.mu.Lock()
	defer users.mu.Unlock()
	if users.checked != 2 {
		t.Errorf("%d passwords hashed, want the burst of 2", users.checked)
	}
}
