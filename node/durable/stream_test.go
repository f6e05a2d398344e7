package durable

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/raft"
)

// Two boards on loopback HTTP, the log's RPCs upgraded on their one
// listener and writes forwarded to the leader: the second board (a
// non-voter: two boards have one voter) joins, writes through the first,
// and reads its own write.
func TestStreamOverHTTP(t *testing.T) {
	names := []string{"a", "b"}
	var mu sync.Mutex
	addrs := map[string]string{}
	resolve := func(b string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := addrs[b]
		return a, ok
	}
	const proof = "X-Test-Board"
	boards := map[string]*Raft{}
	for _, n := range names {
		so := StreamOptions{Self: n, Resolve: resolve, Sign: func(r *http.Request, _ string) { r.Header.Set(proof, "yes") }}
		st := NewStream(so)
		tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: st, MaxPool: 2, Timeout: time.Second, Logger: newHCLog(testutil.Logger())})
		r, err := NewRaft(Options{Self: n, Peers: names, Transport: tr, Stream: st, Timing: testTiming, Logger: testutil.Logger(),
			Alive: func(string) bool { return true }, Forward: NewForwarder(so).Send})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		check := func(h http.Handler) http.Handler { // the node's board check
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get(proof) != "yes" {
					http.Error(w, "not a board", http.StatusUnauthorized)
					return
				}
				h.ServeHTTP(w, r)
			})
		}
		mux.Handle("GET "+UpgradePath, check(st))
		mux.Handle("POST "+ForwardPath, check(r.ForwardHandler()))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		mu.Lock()
		addrs[n] = strings.TrimPrefix(srv.URL, "http://")
		mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done; tr.Close() })
		boards[n] = r
	}
	testutil.WaitFor(t, "b joins as a non-voter", 10*time.Second, func() (bool, string) {
		st := boards["a"].Status()
		return st.State == "leader" && len(st.Nonvoters) == 1 && st.Nonvoters[0] == "b", st.State
	})
	testutil.WaitFor(t, "b writes through a", 10*time.Second, func() (bool, string) {
		v, err := boards["b"].Apply(context.Background(), KindUsers, []byte("x"), 0)
		if err != nil {
			return false, err.Error()
		}
		return v == 1, ""
	})
	if d := boards["b"].Get(KindUsers); string(d.Data) != "x" {
		t.Fatalf("b reads %q after its write", d.Data)
	}
	// a request without the proof is no raft connection
	resp, err := http.Get("http://" + addrs["a"] + UpgradePath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unproven upgrade: %s", resp.Status)
	}
}
