package dispatch

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
)

func testCA(t testing.TB) *clustertls.CA {
	t.Helper()
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := clustertls.ParseCA(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Over TLS a request through a follower reaches the board the master
// chose (both hops mutual TLS); a client that sends a mark or via header
// itself, without a board's certificate, is refused 403 even when the
// header is a good mark; a certificate of another CA does not get in.
func TestForwardsNeedPeerCertificate(t *testing.T) {
	ca := testCA(t)
	tc := newCluster(t, clusterOpts{tls: ca})
	runOnly(tc, "ews2") // the follower ews3 places the request on ews2 and forwards it there
	browser := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	defer browser.CloseIdleConnections()

	resp, err := browser.Get(tc.boards[2].srv.URL + "/api/devices/s1")
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !e.Marked || e.Board != "ews2" {
		t.Fatalf("through a follower over TLS: %d %+v %v", resp.StatusCode, e, err)
	}
	if n := metricValue(t, tc.boards[2].front.placing.pm.placed.WithLabelValues(PlacedOK)); n != 1 {
		t.Fatalf("placed over the TLS channel: %v, want 1", n)
	}

	m, _ := NewMarker(tc.key, MarkOptions{})
	good := m.SignString(KindDispatch, 1, "ews2", &Binding{Method: "GET", Path: "/api/devices/s1"})
	cases := []struct {
		name, board, header, value string
	}{
		{"a good dispatch mark from a client", "ews2", HeaderMark, good},
		{"a via mark from a client", "ews1", HeaderVia, "anything"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b *tboard
			for _, x := range tc.boards {
				if x.name == c.board {
					b = x
				}
			}
			req, _ := http.NewRequest("GET", b.srv.URL+"/api/devices/s1", nil)
			req.Header.Set(c.header, c.value)
			resp, err := browser.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body errorBody
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusForbidden || body.Reason != RefuseNotPeer || !strings.Contains(body.Error, "cluster board") {
				t.Fatalf("status %d %+v, want 403 %s", resp.StatusCode, body, RefuseNotPeer)
			}
		})
	}

	other := testCA(t)
	cert, err := other.Issue("ews9", nil)
	if err != nil {
		t.Fatal(err)
	}
	stranger := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}}}}
	defer stranger.CloseIdleConnections()
	if resp, err := stranger.Get(tc.boards[1].srv.URL + "/api/devices/s1"); err == nil {
		resp.Body.Close()
		t.Fatalf("a certificate of another CA got in: %d", resp.StatusCode)
	}
}
