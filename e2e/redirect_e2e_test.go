package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRedirectMode: with mode = "redirect" the master answers 307 to the
// chosen board, and a real HTTP client that follows it gets the board's
// answer; the board runs the marked request without sending it back.
func TestRedirectMode(t *testing.T) {
	beside(t, "starts real ews processes")
	boards := boardTOML{node: "capacity = 2\n", rest: "[sched]\nmode = \"redirect\"\n[http]\nauth = \"none\"\n[sim]\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\nnode = \"ews3\"\n"}.startCluster(t, 3)
	waitAgree(t, "ews1 master of three", 20*time.Second, boards, "ews1", 1)

	// Without following: the master points at the board the device is wired to.
	noFollow := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// (a device action: device reads are answered by any board from its
	// mirror, never queued nor redirected)
	first, _ := http.NewRequest("POST", "http://"+boards[0].http+"/api/devices/relay1/turn_off", nil)
	resp, err := noFollow.Do(first)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(loc, "http://"+boards[2].http+"/api/devices/relay1") || !strings.Contains(loc, "_ews_mark=") {
		t.Fatalf("master answered %d Location %q, want 307 to ews3 with a mark", resp.StatusCode, loc)
	}

	// Following, through the master and through a follower: the board's answer.
	for _, via := range []*board{boards[0], boards[1]} {
		req, _ := http.NewRequest("POST", "http://"+via.http+"/api/devices/relay1/turn_on", nil)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var s struct{ Name, Node, State string }
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || s.Name != "relay1" || s.State != "on" {
			t.Fatalf("via %s: %d %+v %v", via.name, resp.StatusCode, s, err)
		}
	}

	// A mark is bound to its path: reusing it for another action is refused.
	bad := strings.Replace(loc, "/api/devices/relay1/turn_off", "/api/devices/relay1/turn_on", 1)
	req, _ := http.NewRequest("POST", bad, nil)
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("mark reused for another path: %d, want 403", resp.StatusCode)
	}
}
