package node

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// open starts GET url with hdr and returns the answer's status; a stream
// that opened is closed at the test's end.
func open(t *testing.T, url string, hdr http.Header, sign func(*http.Request)) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if sign != nil {
		sign(req)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp.StatusCode
}

// The boards' own stream needs a board's proof (docs/NOTES.md "Peer streams"). On the code
// before, 64 idle anonymous streams took every place of scope=local and
// the next board was refused 503; now each anonymous one gets 401 at once
// (holding nothing), a forged or misdirected mark 403, and a board with
// its peer mark is let in behind them.
func TestPeerStreamIsForBoards(t *testing.T) {
	n, base, _, _ := startNode(t, tokenConfig(t))
	url := base + "/events?scope=local"
	for i := range 64 {
		if code := open(t, url, nil, nil); code != http.StatusUnauthorized {
			t.Fatalf("anonymous stream %d: %d, want 401", i+1, code)
		}
	}
	if code := open(t, url, http.Header{"Authorization": {"Bearer board-test-token-1"}}, nil); code != http.StatusUnauthorized {
		t.Fatalf("a client's token: %d, want 401 (the stream is for boards)", code)
	}
	if code := open(t, url, nil, func(r *http.Request) { n.acc.peers.Sign(r, "ews2") }); code != http.StatusForbidden {
		t.Fatalf("a mark for another board: %d, want 403", code)
	}
	if code := open(t, url, http.Header{"X-Ews-Peer": {"bm90IGEgbWFyaw"}}, nil); code != http.StatusForbidden {
		t.Fatalf("a forged mark: %d, want 403", code)
	}
	if code := open(t, url, nil, func(r *http.Request) { n.acc.peers.Sign(r, "ews1") }); code != http.StatusOK {
		t.Fatalf("a board with its peer mark: %d, want 200", code)
	}
}

// One address holds at most sse_per_client public streams.
func TestPublicStreamsPerClient(t *testing.T) {
	n, base, _, _ := startNode(t, tokenConfig(t))
	perClient := n.boot.SSEPerClient // the default: the config sets none
	for i := range perClient {
		if code := open(t, base+"/events", nil, nil); code != http.StatusOK {
			t.Fatalf("stream %d: %d, want 200", i+1, code)
		}
	}
	if code := open(t, base+"/events", nil, nil); code != http.StatusTooManyRequests {
		t.Fatalf("stream %d of one address: %d, want 429", perClient+1, code)
	}
}

// docs/NOTES.md "read_auth means read"; version, PID and SHA-256 are not public:
// read_auth covers /api/board, /events and /metrics; without it an anonymous client
// still sees the board page's data, but not which binary runs as which
// process.
func TestReadAuthMeansRead(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	testutil.WriteFile(t, exe, []byte("binary"), 0o755)
	for _, readAuth := range []bool{false, true} {
		cfg := tokenConfig(t)
		cfg.HTTP.ReadAuth = readAuth
		_, base, _, _ := startNode(t, cfg, WithExecutable(exe))
		for _, tc := range []struct {
			path  string
			creds bool
			want  int
		}{
			{"/api/board", false, map[bool]int{false: 200, true: 401}[readAuth]},
			{"/api/board", true, 200},
			{"/events", false, map[bool]int{false: 200, true: 401}[readAuth]},
			{"/events", true, 200},
			{"/api/devices", false, map[bool]int{false: 200, true: 401}[readAuth]},
			{"/metrics", false, map[bool]int{false: 200, true: 401}[readAuth]}, // ews_build_info names the version
			{"/metrics", true, 200},
		} {
			hdr := map[string]string{}
			if tc.creds {
				hdr = bearer
			}
			if tc.path != "/api/board" {
				h := http.Header{}
				for k, v := range hdr {
					h.Set(k, v)
				}
				if code := open(t, base+tc.path, h, nil); code != tc.want {
					t.Errorf("read_auth=%v %s creds=%v: %d, want %d", readAuth, tc.path, tc.creds, code, tc.want)
				}
				continue
			}
			code, _, b := getJSON(t, "GET", base+tc.path, nil, hdr)
			if code != tc.want {
				t.Errorf("read_auth=%v %s creds=%v: %d, want %d", readAuth, tc.path, tc.creds, code, tc.want)
				continue
			}
			if code != 200 {
				continue
			}
			for _, k := range []string{"pid", "version", "sha256", "commit", "go_version"} {
				v, shown := b[k]
				shown = shown && v != "" && v != float64(0)
				if shown != tc.creds {
					t.Errorf("read_auth=%v /api/board creds=%v: %s = %v shown=%v, want shown=%v", readAuth, tc.creds, k, v, shown, tc.creds)
				}
			}
		}
	}
}
