package dispatch

import (
	"net/http"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// sensors is the test clusters' Options.SharedRead: s1 and s2 are sensors.
func sensors(dev string) bool { return dev == "s1" || dev == "s2" }

// Two reads of one device entering the master while the first is under
// way reach the board once; both get its answer. A read with a body, an
// Idempotency-Key or another query, and an action, never share.
func TestReadsShareAtTheEntry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second string            // the second request's path
		hdr    map[string]string // the second's headers
		body   string
		shares bool
	}{
		{"same read", "/api/devices/s1/read", nil, "", true},
		{"another device", "/api/devices/s2/read", nil, "", false},
		{"another query", "/api/devices/s1/read?x=1", nil, "", false},
		{"keyed", "/api/devices/s1/read", map[string]string{"Idempotency-Key": "k1"}, "", false},
		{"with a body", "/api/devices/s1/read", nil, "{}", false},
		{"an action", "/api/devices/s1/toggle", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc0 := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, sharedRead: sensors})
			m, b := tc0.boards[0], tc0.boards[1]
			b.mode.Store(modeBlock)
			var wg sync.WaitGroup
			var first, second *http.Response
			var body1, body2 []byte
			wg.Go(func() { first, body1 = do(t, nil, "POST", m.srv.URL+"/api/devices/s1/read", nil, "") })
			testutil.Eventually(t, "the first read reaches the board", func() bool { return b.started.Load() == 1 })
			wg.Go(func() { second, body2 = do(t, nil, "POST", m.srv.URL+tc.second, tc.hdr, tc.body) })
			fl := m.front.reads.flight("/api/devices/s1/read")
			if tc.shares {
				testutil.Eventually(t, "the second read joins", func() bool { return fl.joined.Load() == 1 })
			} else {
				testutil.Eventually(t, "the second request reaches the board", func() bool { return b.started.Load() == 2 })
			}
			close(b.release)
			wg.Wait()
			if first.StatusCode != 200 || second.StatusCode != 200 {
				t.Fatalf("status %d and %d", first.StatusCode, second.StatusCode)
			}
			want := int32(2)
			if tc.shares {
				want = 1
				if string(body1) != string(body2) {
					t.Fatalf("the joined read got %s, the first %s", body2, body1)
				}
			}
			if n := b.started.Load(); n != want {
				t.Fatalf("the board ran %d requests, want %d", n, want)
			}
			if m.front.reads.flight("/api/devices/s1/read") != nil {
				t.Fatal("the flight outlived its read")
			}
		})
	}
}

// A read that joined one whose answer was not a 200 goes its own way.
func TestSharedReadFailedGoesOwnWay(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, sharedRead: sensors})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeBlockDeny)
	var wg sync.WaitGroup
	var first, second *http.Response
	wg.Go(func() { first, _ = do(t, nil, "POST", m.srv.URL+"/api/devices/s1/read", nil, "") })
	testutil.Eventually(t, "the first read reaches the board", func() bool { return b.started.Load() == 1 })
	wg.Go(func() { second, _ = do(t, nil, "POST", m.srv.URL+"/api/devices/s1/read", nil, "") })
	fl := m.front.reads.flight("/api/devices/s1/read")
	testutil.Eventually(t, "the second read joins", func() bool { return fl.joined.Load() == 1 })
	close(b.release)
	wg.Wait()
	if b.started.Load() != 2 {
		t.Fatalf("the board ran %d requests, want 2: the joined read went its own way", b.started.Load())
	}
	if first.StatusCode == 200 || second.StatusCode == 200 {
		t.Fatalf("status %d and %d, want both refused", first.StatusCode, second.StatusCode)
	}
}

// Reads of a device a request changes (a relay), or of any device when
// nothing says which may share, never share at the entry: each reaches
// the board.
func TestReadsOfAnOutputNeverShare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared func(string) bool
		path   string
	}{
		{"a relay", sensors, "/api/devices/r1/read"},
		{"no SharedRead", nil, "/api/devices/s1/read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, sharedRead: tc.shared})
			m, b := cl.boards[0], cl.boards[1]
			b.mode.Store(modeBlock)
			var wg sync.WaitGroup
			wg.Go(func() { do(t, nil, "POST", m.srv.URL+tc.path, nil, "") })
			testutil.Eventually(t, "the first read reaches the board", func() bool { return b.started.Load() == 1 })
			wg.Go(func() { do(t, nil, "POST", m.srv.URL+tc.path, nil, "") })
			testutil.Eventually(t, "the second read reaches the board too", func() bool { return b.started.Load() == 2 })
			close(b.release)
			wg.Wait()
		})
	}
}
