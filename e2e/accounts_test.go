package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// accAdminToken is the bundle's token of the test cluster: user admin.
const accAdminToken = "acc-admin-token-0123456789abcdef"

// TestAccountsBar: users and roles on three real boards: an admin creates
// an operator limited to relay* and a viewer through one board; the
// operator toggles relay1 through another (200) and is refused led1 (403);
// the viewer is refused any action (403) but reads devices (200); after a
// rotation of op1's token through the first board the old token gets 401
// on the third within 5 s and the new one works; GET /api/audit names op1
// and relay1.
func TestAccountsBar(t *testing.T) {
	beside(t, "starts three boards")
	boards := accCluster(t, 3)
	b1, b2, b3 := boards[0], boards[1], boards[2]

	op := accJSON(t, b1, accAdminToken, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`, http.StatusCreated)
	opTok, _ := op["token"].(string)
	if opTok == "" || op["role"] != "operator" {
		t.Fatalf("create op1 = %v", op)
	}
	vw := accJSON(t, b1, accAdminToken, "POST", "/api/users", `{"name":"v1","role":"viewer"}`, http.StatusCreated)
	vTok, _ := vw["token"].(string)
	// the store reaches every board (each checks credentials itself);
	// waiting with the new tokens would count failures against us
	accSynced(t, boards, 2)
	if s := accSession(b3, vTok); s["user"] != "v1" || s["role"] != "viewer" {
		t.Errorf("GET /api/session as v1 on %s = %v", b3.name, s)
	}

	accStatus(t, b2, opTok, "POST", "/api/devices/relay1/toggle", http.StatusOK)
	accStatus(t, b2, opTok, "POST", "/api/devices/led1/toggle", http.StatusForbidden)
	accStatus(t, b3, vTok, "POST", "/api/devices/relay1/turn_on", http.StatusForbidden)
	accStatus(t, b3, vTok, "POST", "/api/devices/led1/toggle", http.StatusForbidden)
	accStatus(t, b3, vTok, "GET", "/api/devices", http.StatusOK)
	accStatus(t, b2, opTok, "GET", "/api/users", http.StatusForbidden)
	accStatus(t, b2, vTok, "POST", "/api/users/op1/rotate", http.StatusForbidden)

	rotated := time.Now() // the rotation is sent
	rot := accJSON(t, b1, accAdminToken, "POST", "/api/users/op1/rotate", "", http.StatusOK)
	newTok, _ := rot["token"].(string)
	if newTok == "" || newTok == opTok {
		t.Fatalf("rotate = %v", rot)
	}
	var wg sync.WaitGroup
	took := make([]time.Duration, len(boards))
	for i, b := range boards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if accSession(b, opTok)["authenticated"] == false {
					took[i] = time.Since(rotated)
					return
				}
				time.Sleep(2 * time.Millisecond) // polling interval, not a wait for a condition
			}
		}()
	}
	wg.Wait()
	for i, d := range took {
		if d == 0 {
			t.Errorf("the old token still holds on %s 5 s after the rotation", boards[i].name)
		}
	}
	t.Logf("rotation to old token refused: %v (ews1..ews3)", took)
	accStatus(t, b3, opTok, "POST", "/api/devices/relay1/toggle", http.StatusUnauthorized)
	accSynced(t, boards, 3)
	accStatus(t, b3, newTok, "POST", "/api/devices/relay1/toggle", http.StatusOK)

	var found bool
	testutil.EventuallyWithin(t, "GET /api/audit names op1 and relay1", 5*time.Second, func() bool {
		a := accJSON(t, b3, accAdminToken, "GET", "/api/audit?user=op1&target=relay1&limit=50", "", http.StatusOK)
		list, _ := a["entries"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			if m["user"] == "op1" && m["target"] == "relay1" && m["action"] == "device.toggle" && m["result"] == float64(200) {
				found = true
			}
		}
		return found
	})
	all := accJSON(t, b2, accAdminToken, "GET", "/api/audit?limit=200", "", http.StatusOK)
	var created, refused bool
	for _, e := range all["entries"].([]any) {
		m := e.(map[string]any)
		created = created || m["action"] == "user.create" && m["target"] == "op1" && m["user"] == "admin"
		refused = refused || m["user"] == "op1" && m["target"] == "led1" && m["result"] == float64(403)
	}
	if !created || !refused {
		t.Errorf("audit: user.create of op1 by admin %v, op1 refused led1 %v; entries %v", created, refused, all["entries"])
	}
	accStatus(t, b1, opTok, "GET", "/api/audit", http.StatusUnauthorized)
	accStatus(t, b1, newTok, "GET", "/api/audit", http.StatusForbidden)
}

// accCluster starts n boards with token auth (relay1 on the second,
// led1 on the third) and waits until every board sees a master and all
// running.
func accCluster(t *testing.T, n int) []*board {
	t.Helper()
	boards := boardTOML{
		node:    "capacity = 4\n",
		cluster: "tmax = \"600ms\"\ntthreshold = \"600ms\"\nheartbeat = \"100ms\"\n",
		rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\ndevice_latency = \"2ms\"\n"+
			"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\nnode = %q\n[[device]]\nname = \"led1\"\ndriver = \"sim-switch\"\nnode = %q\n",
			accAdminToken, fmt.Sprintf("ews%d", min(2, n)), fmt.Sprintf("ews%d", min(3, n))),
	}.startCluster(t, n)
	waitRunning(t, boards, "", nil)
	// the boards seed user admin with the cluster's token first (docs/NOTES.md
	// "Security": a card gives one board): the store's first version
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" holds the seeded admin", 20*time.Second, func() bool {
			got, _ := accSession(b, "")["users_version"].(float64)
			return got >= accSeed
		})
	}
	return boards
}

// accSeed is the versions of the users store the boards write before a
// test's first change: user admin's token, seeded.
const accSeed = 1

func accStatus(t *testing.T, b *board, token, method, path string, want int) {
	t.Helper()
	code, body, err := b.do(token, method, path, "")
	if err != nil || code != want {
		t.Errorf("%s %s on %s = %d %s (%v), want %d", method, path, b.name, code, body, err, want)
	}
}

// accJSON sends one request and decodes its answer. A 503 (a master
// that has not yet heard every board's users store, an election) is sent
// again, as a client following Retry-After would.
func accJSON(t *testing.T, b *board, token, method, path, body string, want int) map[string]any {
	t.Helper()
	var code int
	var out []byte
	var err error
	testutil.EventuallyWithin(t, method+" "+path+" answered, not 503", 15*time.Second, func() bool {
		code, out, err = b.do(token, method, path, body)
		return err != nil || code != http.StatusServiceUnavailable || want == http.StatusServiceUnavailable
	})
	if err != nil || code != want {
		t.Fatalf("%s %s on %s = %d %s (%v), want %d", method, path, b.name, code, out, err, want)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, out)
	}
	return m
}

// accSession is GET /api/session as token (an empty map on failure).
func accSession(b *board, token string) map[string]any {
	code, out, err := b.do(token, "GET", "/api/session", "")
	m := map[string]any{}
	if err == nil && code == http.StatusOK {
		_ = json.Unmarshal(out, &m)
	}
	return m
}

// accSynced waits until every board holds version v of the users store
// (GET /api/session says it to anyone).
func accSynced(t *testing.T, boards []*board, v float64) {
	t.Helper()
	v += accSeed
	for _, b := range boards {
		testutil.EventuallyWithin(t, fmt.Sprintf("%s holds users version %v", b.name, v), 10*time.Second, func() bool {
			got, _ := accSession(b, "")["users_version"].(float64)
			return got >= v
		})
	}
}

// A board that was down while a token was rotated takes the current
// version when it returns (from any board's stream), and keeps it across
// a restart (it never serves the older one again).
func TestAccountsBoardCatchesUp(t *testing.T) {
	beside(t, "starts three boards")
	boards := accCluster(t, 3)
	op := accJSON(t, boards[0], accAdminToken, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`, http.StatusCreated)
	accSynced(t, boards, 1)
	old := op["token"].(string)
	down := boards[2]
	down.kill9()
	accJSON(t, boards[1], accAdminToken, "POST", "/api/users/op1/rotate", "", http.StatusOK)
	accSynced(t, boards[:2], 2)
	down.start(t, ewsBinary(t))
	accSynced(t, []*board{down}, 2)
	if code, _, _ := down.do(old, "POST", "/api/devices/relay1/read", ""); code != http.StatusUnauthorized {
		t.Errorf("the old token on the board that was down = %d, want 401", code)
	}
	// alone after a restart (no peer to learn from), it still holds version 2
	for _, b := range boards[:2] {
		b.kill9()
	}
	down.kill9()
	down.start(t, ewsBinary(t))
	testutil.EventuallyWithin(t, down.name+" serves again", 10*time.Second, func() bool {
		v, _ := accSession(down, "")["users_version"].(float64)
		return v == 2+accSeed
	})
}

// TestAccountsMeasureRotation prints the time from sending a rotation to
// the old token refused on every board, over 10 rotations: a board
// refuses the old token from the moment it holds the new version (the
// token index is swapped with it), which GET /api/session tells without
// credentials, so the polling counts no failed logins. A measurement, run
// by hand (figures in docs/BENCHMARKS.md):
//
//	EWS_MEASURE=1 EWS_ACC_BOARDS=3 go test -run TestAccountsMeasureRotation -v ./e2e
func TestAccountsMeasureRotation(t *testing.T) {
	if os.Getenv("EWS_MEASURE") == "" {
		t.Skip("a measurement: set EWS_MEASURE=1")
	}
	n := 3
	if v := os.Getenv("EWS_ACC_BOARDS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 3 {
			t.Fatalf("EWS_ACC_BOARDS=%q: want a number ≥ 3", v)
		}
	}
	boards := accCluster(t, n)
	op := accJSON(t, boards[0], accAdminToken, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`, http.StatusCreated)
	accSynced(t, boards, 1)
	old := op["token"].(string)
	var all []time.Duration
	for i := range 10 {
		v := float64(i+2) + accSeed
		start := time.Now()
		rot := accJSON(t, boards[i%n], accAdminToken, "POST", "/api/users/op1/rotate", "", http.StatusOK)
		var wg sync.WaitGroup
		took := make([]time.Duration, n)
		for j, b := range boards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(start) < 10*time.Second {
					if got, _ := accSession(b, "")["users_version"].(float64); got >= v {
						took[j] = time.Since(start)
						return
					}
					time.Sleep(time.Millisecond) // polling interval
				}
			}()
		}
		wg.Wait()
		worst := time.Duration(0)
		for j, d := range took {
			if d == 0 {
				t.Fatalf("rotation %d: %s never took version %v", i, boards[j].name, v)
			}
			worst = max(worst, d)
		}
		all = append(all, worst)
		if code, _, _ := boards[n-1].do(old, "POST", "/api/devices/relay1/read", ""); code != http.StatusUnauthorized {
			t.Errorf("rotation %d: the old token on %s = %d, want 401", i, boards[n-1].name, code)
		}
		old = rot["token"].(string)
	}
	slices.Sort(all)
	t.Logf("%d boards, heartbeat 100ms: rotation sent -> old token refused on every board: min %v, median %v, max %v (10 rotations, sent through each board in turn)",
		n, all[0].Round(100*time.Microsecond), all[len(all)/2].Round(100*time.Microsecond), all[len(all)-1].Round(100*time.Microsecond))
}
