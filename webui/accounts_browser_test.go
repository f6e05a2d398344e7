//go:build browser

package webui_test

// The accounts' browser test (users, roles, the admin page) against a real
// board (node.New on loopback):
//
//	go test -tags browser -run TestAccountsBrowser ./webui/

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testbrowser"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node"
)

const accBundleToken = "browser-admin-token-0123456789"

// accTab is a chromium tab for one test, given 90 s and closed with it;
// the test is skipped when chromium does not start.
func accTab(t *testing.T) context.Context {
	t.Helper()
	return testbrowser.Start(t, testbrowser.Find(t), 90*time.Second, nil)
}

// accBoard runs a standalone board with token auth and relay1, relay2, led1.
func accBoard(t *testing.T) string {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"token\"\ntoken = \""+accBundleToken+"\"\nshutdown_timeout = \"2s\"\n[sim]\ndevice_latency = \"1ms\"\n"+
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"relay2\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"led1\"\ndriver = \"sim-switch\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testutil.Eventually(t, "the board ready", func() bool { return n.Addr() != nil && n.Ready() })
	return "http://" + n.Addr().String()
}

// accAPI sends one request as token and decodes the JSON answer.
func accAPI(t *testing.T, base, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func accWait(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 1500)`))
		t.Fatalf("%s: waiting for %s: %v\npage text:\n%s", what, expr, err, dump)
	}
}

// accLogin logs the page in with token (a session cookie) and reloads it.
func accLogin(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	js := fmt.Sprintf(`fetch('/api/logout', {method: 'POST', headers: {'X-Requested-With': 'ews-webui'}}).then(() =>
		fetch('/api/login', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Requested-With': 'ews-webui'}, body: JSON.stringify({token: %q})})).then(r => r.status)`, token)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if code, err := chromedp.Run(ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise)); err != nil || code != 200 {
		t.Fatalf("login: %d %v", code, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/#devices")); err != nil { // a new page: a hash change alone loads nothing
		t.Fatal(err)
	}
}

// controls is a JS expression: the names of the cards that show a device
// control (the history button of a card is not one).
const controls = `[...document.querySelectorAll('#device-list .card')].filter(c => [...c.querySelectorAll('.ctl input, .ctl button')].some(e => e.offsetParent !== null)).map(c => c.dataset.name).sort().join(',')`

// A viewer sees no controls; an operator sees controls only on its
// devices; the admin page creates and rotates a user.
func TestAccountsBrowser(t *testing.T) {
	base := accBoard(t)
	_, op := accAPI(t, base, accBundleToken, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	_, vw := accAPI(t, base, accBundleToken, "POST", "/api/users", `{"name":"v1","role":"viewer"}`)

	ctx := accTab(t)

	accLogin(t, ctx, base, vw["token"].(string))
	// the role is shown at once and the cards redrawn for it in the next
	// frame (app.js renderAuth): wait for the redraw, as the operator's and
	// admin's steps below do; controls that stay fail the wait
	accWait(t, ctx, "the viewer's page shows its role and the cards, without controls", `document.getElementById('who').textContent.includes('v1') && document.querySelectorAll('#device-list .card').length === 3 && (`+controls+`) === ''`)
	if accEval[bool](t, ctx, `!document.getElementById('tab-users').hidden`) {
		t.Error("a viewer sees the Users tab")
	}

	accLogin(t, ctx, base, op["token"].(string))
	accWait(t, ctx, "the operator's controls", `(`+controls+`) === 'relay1,relay2'`)

	accLogin(t, ctx, base, accBundleToken)
	accWait(t, ctx, "the admin sees the Users tab", `!document.getElementById('tab-users').hidden && (`+controls+`) === 'led1,relay1,relay2'`)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#users")); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the users list", `!!document.querySelector('#u-list tr[data-user="op1"]')`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#u-name`), "op2"),
		chromedp.SetValue(chromedp.CSS(`#u-role`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`#u-devices`), "relay2, pump*"),
		chromedp.Click(chromedp.CSS(`#u-create`)),
	); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the new user's token, shown once", `(document.getElementById('u-token-value')?.textContent || '').startsWith('ews_') && !!document.querySelector('#u-list tr[data-user="op2"]')`)
	tok1 := accEval[string](t, ctx, `document.getElementById('u-token-value').textContent`)
	if code, m := accAPI(t, base, tok1, "GET", "/api/session", ""); code != 200 || m["user"] != "op2" || m["role"] != "operator" {
		t.Fatalf("the token the page showed: %d %v", code, m)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#u-list tr[data-user="op2"] .u-rotate`))); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the rotated token", fmt.Sprintf(`(document.getElementById('u-token-value')?.textContent || '') !== %q`, tok1))
	tok2 := accEval[string](t, ctx, `document.getElementById('u-token-value').textContent`)
	if _, m := accAPI(t, base, tok1, "GET", "/api/session", ""); m["authenticated"] != false {
		t.Errorf("the old token after a rotation in the page: %v", m)
	}
	if _, m := accAPI(t, base, tok2, "GET", "/api/session", ""); m["user"] != "op2" {
		t.Errorf("the new token: %v", m)
	}
	accWait(t, ctx, "the audit table names the rotation", `[...document.querySelectorAll('#u-audit td')].some(td => td.textContent === 'user.rotate')`)

	// a user logs in with name and password through the dialog
	if code, m := accAPI(t, base, accBundleToken, "POST", "/api/users/v1/password", `{"password":"viewer-password-1"}`); code != 200 {
		t.Fatalf("set v1's password: %d %v", code, m)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#logout-btn`))); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "logged out", `!document.getElementById('login-btn').hidden`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#login-btn`)),
		chromedp.Click(chromedp.CSS(`input[name=mode][value=basic]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-user`), "v1"),
		chromedp.SendKeys(chromedp.CSS(`#login-pass`), "viewer-password-1"),
		chromedp.Click(chromedp.CSS(`#login-submit`)),
	); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "logged in as v1 with a password", `document.getElementById('who').textContent.includes('v1') && document.getElementById('tab-users').hidden`)
}

func accEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}
