package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// Issue 50: with ews3's board bundle alone (its certificate, the cluster's
// secrets, no person's credential), a users store that makes "mallory" an
// admin, forwarded to the log's leader, was committed on every board. Now
// the leader refuses it (403, refused by the log's check of who signed) and
// no board takes it; the admin's own write still goes through.
func TestCardForgesNoUsersWrite(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	c := newRotateCluster(t, bin, true)
	c.userToken(t) // the admin's write: the store is at its signed version 2

	card, thief := c.thief(t, c.boards[2])
	seal, err := users.New(users.Options{Secret: card.Store()})
	if err != nil {
		t.Fatal(err)
	}
	forged := seal.Seal(&users.Doc{Version: 99, Users: []users.User{
		{Name: "admin", Role: users.RoleAdmin}, {Name: "mallory", Role: users.RoleAdmin, Token: make([]byte, 32)}}})

	// the leader, as the log's status names it
	var leader *tlsBoard
	testutil.WaitFor(t, "the log's leader", 20*time.Second, func() (bool, string) {
		code, body := c.do(c.boards[0], "GET", "/api/cluster/raft", c.bundle.Token, "")
		var st struct {
			Leader string `json:"leader"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		for _, b := range c.boards {
			if b.name == st.Leader {
				leader = b
			}
		}
		return code == http.StatusOK && leader != nil, body
	})
	signatureRefusals := 0
	for expect := range uint64(4) { // whatever version the thief guesses
		cmd, _ := json.Marshal(map[string]any{"v": 1, "kind": durable.KindUsers, "data": []byte(forged), "expect": expect, "by": "admin", "sig": make([]byte, 64)})
		resp, err := thief.Post("https://"+leader.https+durable.ForwardPath, "application/json", strings.NewReader(string(cmd)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusForbidden && strings.Contains(string(body), "signature"):
			signatureRefusals++
		case resp.StatusCode == http.StatusConflict && strings.Contains(string(body), "conflict"):
			// a version the store has left: a conflict before any check
			// (the writer reads again), nothing written either
		default:
			t.Fatalf("forged users store, expect %d: %d %s, want 403 naming the signature (or 409 for a version left)", expect, resp.StatusCode, body)
		}
	}
	if signatureRefusals == 0 {
		t.Fatal("no guess reached the signature check: the forgery at the store's version was not tried")
	}
	for _, b := range c.boards {
		code, body := c.do(b, "GET", "/api/users", c.bundle.Token, "")
		if code != http.StatusOK || strings.Contains(body, "mallory") {
			t.Fatalf("%s's users after the forgery: %d %s", b.name, code, body)
		}
	}
	if code, body := c.do(c.boards[1], "POST", "/api/users", c.bundle.Token, `{"name":"viewer1","role":"viewer"}`); code != http.StatusCreated {
		t.Fatalf("the admin's write after the forgery: %d %s", code, body)
	}

	// a browser's session signs too: its login on a follower keeps the
	// key's seed in a second cookie, which the master (where /api/users
	// runs) opens; the session cookie alone signs nothing
	resp, err := c.client.Post(c.url(c.boards[1])+"/api/login", "application/json", strings.NewReader(`{"token":"`+c.bundle.Token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusOK || len(cookies) != 2 {
		t.Fatalf("login: %s, cookies %v", resp.Status, cookies)
	}
	for i, c2 := range []struct {
		cookies []*http.Cookie
		want    int
	}{{cookies, http.StatusCreated}, {cookies[:1], http.StatusForbidden}} {
		req, _ := http.NewRequest("POST", c.url(c.boards[1])+"/api/users", strings.NewReader(`{"name":"viewer`+string(rune('2'+i))+`","role":"viewer"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", c.url(c.boards[1]))
		for _, ck := range c2.cookies {
			req.AddCookie(ck)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if resp.StatusCode != c2.want {
			t.Fatalf("a session's write with %d cookies: %d %s, want %d", len(c2.cookies), resp.StatusCode, body, c2.want)
		}
	}
}
