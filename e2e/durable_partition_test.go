package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// durableToken is the bundle's token of the durable partition test: admin.
const durableToken = "durable-admin-token-0123456789ab"

// TestDurablePartition is the two partition scenarios of the users store
// on real boards in network namespaces (docs/NOTES.md "Durable state on
// Raft"): ews1 makes u1; one board is cut off (ews3, then the master
// ews1) and masters its own side; the majority deletes u1 (200) while the
// cut-off board's attempt to make u2 is refused (503, "no quorum: 1 of 3
// voters reachable", Retry-After); after the heal every board holds the
// same store, u1 stays deleted (its token refused everywhere) and u2 was
// never made: no acknowledged write lost, nothing resurrected.
func TestDurablePartition(t *testing.T) {
	needNetns(t, "the durable partition test")
	for _, off := range []int{2, 0} {
		t.Run(fmt.Sprintf("ews%d cut off", off+1), func(t *testing.T) { durablePartition(t, off) })
	}
}

func durablePartition(t *testing.T, off int) {
	start := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }
	// one tag per setup: the veths of the previous subtest may outlive
	// its `ip netns del` for a moment (the kernel tears namespaces down in
	// the background), and the same names then failed "File exists"
	tag := fmt.Sprintf("%d%d", os.Getpid()%10000, off+1)
	const n = 3
	boards := netCluster(t, "ewr", tag, "10.214.0", n)
	// tmax sets the log's timeouts too (node/durablestate.go): elections
	// in about a second
	boardTOML{cluster: "tmax = \"600ms\"\ntthreshold = \"600ms\"\nheartbeat = \"100ms\"\n",
		rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\n", durableToken)}.write(t, boards)
	startAll(t, ewsBinary(t), boards)
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	phase("boards up, ews1 master")

	u1 := accJSON(t, boards[0], durableToken, "POST", "/api/users", `{"name":"u1","role":"viewer"}`, http.StatusCreated)
	u1Token, _ := u1["token"].(string)
	v1 := raftAgree(t, boards, 0)
	phase("u1 made, on every board")

	var rest []int // the majority
	for i := range n {
		if i != off {
			rest = append(rest, i)
		}
	}
	cut := func(add bool) { netIsolate(t, boards, off, add) }
	cut(true)
	cutOff, major := boards[off], boards[rest[0]]
	testutil.EventuallyWithin(t, "each side has its own master", 15*time.Second, func() bool {
		a, errA := cutOff.view()
		b, errB := major.view()
		if errA != nil || errB != nil || a.Master != cutOff.name || b.Master == "" || b.Master == cutOff.name {
			return false
		}
		for _, r := range a.Nodes { // the cut-off board hears no other
			if r.Name != cutOff.name && r.Runstate != "down" {
				return false
			}
		}
		return true
	})
	phase(cutOff.name + " cut off, master of its side")
	// the majority deletes u1 (a 503 while it elects a leader is retried)
	accJSON(t, major, durableToken, "DELETE", "/api/users/u1", "", http.StatusOK)
	// the cut-off side cannot make u2
	code, retry, msg := durableWrite(t, cutOff, `{"name":"u2","role":"viewer"}`)
	if code != http.StatusServiceUnavailable || retry == "" || msg != "no quorum: 1 of 3 voters reachable" {
		t.Fatalf("POST /api/users on the cut-off %s = %d %q (Retry-After %q), want 503 with Retry-After and \"no quorum: 1 of 3 voters reachable\"", cutOff.name, code, msg, retry)
	}
	phase("u1 deleted on the majority, u2 refused on " + cutOff.name)
	cut(false)
	v2 := raftAgree(t, boards, v1)
	phase(fmt.Sprintf("healed: every board at log version %d (%d before the cut)", v2, v1))
	for _, b := range boards {
		testutil.WaitFor(t, b.name+" refuses the deleted u1's token", 5*time.Second, func() (bool, string) {
			s := accSession(b, u1Token)
			return s["user"] != "u1", fmt.Sprint(s)
		})
	}
	list := accJSON(t, cutOff, durableToken, "GET", "/api/users", "", http.StatusOK)
	var names []string
	for _, u := range list["users"].([]any) {
		names = append(names, u.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "admin" {
		t.Errorf("users after the heal: %v, want [admin] (u1 deleted by the majority, u2 refused)", names)
	}
}

// durableWrite POSTs a user through b and returns the status, Retry-After
// and the error text.
func durableWrite(t *testing.T, b *board, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+b.http+"/api/users", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+durableToken)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST /api/users on %s: %v", b.name, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	msg, _ := m["error"].(string)
	return resp.StatusCode, resp.Header.Get("Retry-After"), msg
}

// raftAgree waits until every board's log holds the same version of the
// users store, above after, and returns it.
func raftAgree(t *testing.T, boards []*board, after uint64) uint64 {
	t.Helper()
	var v uint64
	testutil.WaitFor(t, "every board's log at the same users version", 20*time.Second, func() (bool, string) {
		seen := ""
		v = 0
		ok := true
		for i, b := range boards {
			code, out, err := b.do("", "GET", "/api/cluster/raft", "")
			var st struct {
				Leader    string            `json:"leader"`
				Documents map[string]uint64 `json:"documents"`
			}
			if err != nil || code != http.StatusOK || json.Unmarshal(out, &st) != nil {
				return false, fmt.Sprintf("%s: %d %v", b.name, code, err)
			}
			got := st.Documents["users"]
			seen += fmt.Sprintf("%s:%d(leader %s) ", b.name, got, st.Leader)
			if got <= after || (i > 0 && got != v) {
				ok = false
			}
			v = got
		}
		return ok, seen
	})
	return v
}
