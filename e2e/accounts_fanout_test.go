package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/users"
)

// TestAccountsFanout32 is the replication path of 32 boards in one
// process: the master's users store on its local event stream, 31
// followers mirroring it through node/devsync as the boards do. Every
// follower takes each rotation, and the old token is refused on all of
// them; it logs the time from the rotation to the last follower holding
// it (docs/BENCHMARKS.md). The front door's hop to the master is
// left out (measured with real boards in TestAccountsMeasureRotation).
func TestAccountsFanout32(t *testing.T) {
	long(t, "31 event streams")
	const followers = 31
	secret := []byte("the cluster key of the fan-out test")
	hub := events.New(events.Options{Logger: slog.New(slog.DiscardHandler)})
	master, err := users.New(users.Options{Secret: secret, OnChange: func(s string) { hub.Publish("users", s) }})
	if err != nil {
		t.Fatal(err)
	}
	hub.Snapshot("users", func() any { return master.Sealed() })
	mux := http.NewServeMux()
	mux.Handle("GET /events", hub)
	master.Register(mux, func(*http.Request) *users.Principal { return users.Root() })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer hub.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stores := make([]*users.Store, followers)
	adopted := make(chan struct{}, 64*followers) // one per version a follower takes
	for i := range stores {
		st, err := users.New(users.Options{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = st
		m := devsync.New("f", func() []devsync.Peer {
			return []devsync.Peer{{Name: "m", HTTP: strings.TrimPrefix(srv.URL, "http://")}}
		},
			devsync.Options{Logger: slog.New(slog.DiscardHandler), OnEvent: func(_, ev string, data []byte) {
				var sealed string
				if ev != "users" || json.Unmarshal(data, &sealed) != nil {
					return
				}
				if took, _ := st.AdoptSealed(sealed); took {
					adopted <- struct{}{}
				}
			}})
		go m.Run(ctx)
	}
	post := func(path, body string) map[string]any {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return m
	}
	tok := post("/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)["token"].(string)
	all := func(v uint64) bool {
		for _, st := range stores {
			if st.Version() < v {
				return false
			}
		}
		return true
	}
	testutil.EventuallyWithin(t, "31 followers hold version 1", 30*time.Second, func() bool { return all(1) })
	for len(adopted) > 0 {
		<-adopted
	}

	var took []time.Duration
	for i := range 10 {
		start := time.Now()
		next := post("/api/users/op1/rotate", "")["token"].(string)
		for range followers { // each follower tells the moment it takes the version
			select {
			case <-adopted:
			case <-time.After(10 * time.Second):
				t.Fatalf("rotation %d: not every follower took it in 10 s", i)
			}
		}
		took = append(took, time.Since(start))
		if !all(uint64(i + 2)) {
			t.Fatalf("rotation %d: a follower took another version", i)
		}
		for j, st := range stores {
			if st.Token(tok) != nil || st.Token(next) == nil {
				t.Fatalf("rotation %d: follower %d still takes the old token or not the new", i, j)
			}
		}
		tok = next
	}
	slices.Sort(took)
	t.Logf("32 boards in process (master + 31 followers over SSE): rotation -> last follower refuses the old token: min %v, median %v, max %v (10 rotations)",
		took[0].Round(100*time.Microsecond), took[len(took)/2].Round(100*time.Microsecond), took[len(took)-1].Round(100*time.Microsecond))
}
