package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestRedirectOnceThenDirect (papers 003 and 002): in redirect
// mode the master answers a client's first request with a 307 to a board
// and an assignment; a client that followed it gets its next 20 requests
// answered 200 by that board directly, with no redirect. A forged
// assignment goes back to the master (307); when its board is gone, the
// master assigns the client to a live board, and its old assignment shown
// to another board sends it back to the master.
func TestRedirectOnceThenDirect(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	boards := boardTOML{node: "capacity = 4\n", cluster: fastTimers, rest: "[sched]\nmode = \"redirect\"\npolicy = \"rr\"\n[http]\nauth = \"none\"\n[sim]\n"}.startCluster(t, 3)
	waitAgree(t, "ews1 master of three", 20*time.Second, boards, "ews1", 1)
	master := boards[0]

	jar, _ := cookiejar.New(nil)
	redirects := 0
	follow := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		redirects++
		return nil
	}}
	direct := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	get := func(c *http.Client, u string, hdr http.Header) (*http.Response, error) {
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	// Until the master redirects once (rr: it also picks itself, then runs it).
	var at *board
	var assign string
	testutil.EventuallyWithin(t, "one redirect to a board", 20*time.Second, func() bool {
		before := redirects
		resp, err := get(follow, "http://"+master.http+"/", nil)
		if err != nil || resp.StatusCode != 200 || redirects == before {
			return false
		}
		for _, b := range boards[1:] {
			if resp.Request.URL.Host == b.http {
				at, assign = b, resp.Header.Get("X-Ews-Assign")
			}
		}
		return at != nil
	})
	if assign == "" {
		t.Fatal("the board's answer does not carry the assignment header")
	}
	ranBefore := metric(at, "ews_dispatch_assigned_total")

	// The bar: 20 of 20 further requests answered 200 by the board, no redirect.
	ok := 0
	for i := range 20 {
		resp, err := get(direct, "http://"+at.http+"/", nil)
		switch {
		case err != nil:
			t.Errorf("request %d: %v", i, err)
		case resp.StatusCode != 200:
			t.Errorf("request %d: %d (Location %q, back %q), want 200 from %s", i, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("X-Ews-Back"), at.name)
		default:
			ok++
		}
	}
	if ok != 20 {
		t.Fatalf("%d of 20 requests answered directly by %s", ok, at.name)
	}
	if ran := metric(at, "ews_dispatch_assigned_total"); ran-max(ranBefore, 0) < 20 {
		t.Fatalf("%s counted %v requests run on assignments, want 20 more than %v", at.name, ran, ranBefore)
	}
	// An API client sends the header instead of the cookie.
	api := &http.Client{Timeout: 10 * time.Second, CheckRedirect: direct.CheckRedirect} // no cookies
	if resp, err := get(api, "http://"+at.http+"/", http.Header{"X-Ews-Assign": {assign}}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("by header: %v %v", resp, err)
	}

	// ews bench plays clients that follow assignments: most requests go straight to boards.
	out := filepath.Join(t.TempDir(), "bench.json")
	if b, err := exec.Command(bin, "bench", "--url", "http://"+master.http, "--rate", "100", "--duration", "2s", "--max", "40",
		"--clients", "4", "--mix", "browse=1:GET /", "--json", out).CombinedOutput(); err != nil {
		t.Fatalf("ews bench --clients: %v\n%s", err, b)
	}
	var rep struct {
		Direct, Redirects int64
		Total             struct{ OK, Errors int64 }
	}
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("bench report: %v %s", err, b)
	}
	t.Logf("bench, 4 clients: %d ok, %d errors, %d straight to their board, %d redirects followed", rep.Total.OK, rep.Total.Errors, rep.Direct, rep.Redirects)
	if rep.Total.OK != 40 || rep.Direct < 10 {
		t.Fatalf("bench with 4 clients: %d ok, %d straight to their board, %d redirects; want 40 ok, most direct", rep.Total.OK, rep.Direct, rep.Redirects)
	}

	// A forged assignment goes back to the master.
	resp, err := get(direct, "http://"+at.http+"/", http.Header{"X-Ews-Assign": {assign[:len(assign)-2] + "xx"}})
	if err != nil {
		t.Fatal(err)
	}
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusTemporaryRedirect || loc == nil || loc.Host != master.http || resp.Header.Get("X-Ews-Back") != "forged" {
		t.Fatalf("forged: %d Location %q back %q, want 307 to the master", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("X-Ews-Back"))
	}

	// Its board leaves: the master assigns the client to a live board.
	at.kill9()
	testutil.EventuallyWithin(t, at.name+" down in the master's table", 20*time.Second, func() bool {
		v, err := master.view()
		return err == nil && v.runstates()[at.name] == "down"
	})
	var other *board
	for _, b := range boards[1:] {
		if b != at {
			other = b
		}
	}
	testutil.EventuallyWithin(t, "reassigned to a live board", 20*time.Second, func() bool {
		resp, err := get(follow, "http://"+master.http+"/", http.Header{"X-Ews-Assign": {assign}})
		return err == nil && resp.StatusCode == 200 && resp.Request.URL.Host != at.http
	})
	// and the old assignment, shown to another board, sends it back
	resp, err = get(api, "http://"+other.http+"/", http.Header{"X-Ews-Assign": {assign}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("X-Ews-Back") != "other" {
		t.Fatalf("another board's assignment: %d back %q, want 307 other", resp.StatusCode, resp.Header.Get("X-Ews-Back"))
	}
}
