//go:build browser

package webui

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLoadingAndBoardLog: while the board has not answered with its
// devices the Devices tab says it is loading, never "No devices"; an empty
// answer then says "No devices yet" and links to Settings; the Board tab's Log panel shows the
// board's recent log (GET /api/board/log) once logged in (issue 36).
func TestBrowserLoadingAndBoardLog(t *testing.T) {
	fake := newFakeBoard(goodToken)
	fake.setDevices(nil)
	release := make(chan struct{})
	held := func(next http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			next.ServeHTTP(w, r)
		}
	}
	board := fake.routes(Handler())
	mux := http.NewServeMux()
	mux.Handle("GET /api/devices", held(board))
	mux.Handle("GET /events", held(board))
	mux.HandleFunc("GET /api/board", func(w http.ResponseWriter, r *http.Request) {
		fake.json(w, 200, map[string]any{"name": "ews2", "runstate": "running", "devices": []any{}, "ca_sha256": "AB:CD:EF"})
	})
	mux.HandleFunc("GET /api/board/log", func(w http.ResponseWriter, r *http.Request) {
		if !fake.authed(r) {
			fake.fail4xx(w, 401, "auth: credentials required")
			return
		}
		fake.json(w, 200, map[string]any{"lines": []map[string]any{
			{"seq": 1, "time": "2026-12-02T08:00:01Z", "level": "INFO", "text": "ews: serving addr=127.0.0.1:8080"},
			{"seq": 2, "time": "2026-12-02T08:00:02Z", "level": "WARN", "text": "cluster: peer ews3 unreachable"},
		}})
	})
	mux.Handle("/", board)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer fake.dropStreams(false)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	ctx := browser(t)

	run(t, ctx, "open the UI", chromedp.Navigate(srv.URL+"/#devices"))
	t.Run("loading, then no devices", func(t *testing.T) {
		waitJS(t, ctx, "loading", `!document.getElementById('devices-empty').hidden && document.getElementById('devices-empty').textContent === 'Loading devices…'`)
		if evalJS[bool](t, ctx, `document.body.innerText.includes('No devices')`) {
			t.Fatal(`"No devices" shown before the board answered`)
		}
		close(release)
		released = true
		waitJS(t, ctx, "no devices", `document.getElementById('devices-empty').textContent.startsWith('No devices yet') && !document.getElementById('devices-empty').classList.contains('loading')`)
		// a new board's empty list says where devices come from, with a link there
		if got := evalJS[string](t, ctx, `document.getElementById('devices-empty-go').getAttribute('href')`); got != "#settings" {
			t.Fatalf("the empty list links to %q, want #settings", got)
		}
		if !evalJS[bool](t, ctx, `document.getElementById('devices-empty').textContent.includes('Settings')`) {
			t.Fatal("the empty list does not point to Settings")
		}
	})

	// a button's card says pressed or released, never "false" (issue 47)
	t.Run("a button card", func(t *testing.T) {
		now := "2026-12-02T08:00:00Z"
		fake.setDevices([]*fakeDevice{{Name: "button1", Driver: "sim-button", Node: "ews1", State: "off", Value: false, Updated: now, Simulated: true}})
		value := `(() => { const c = ` + card("button1") + `; return c ? c.querySelector('.value').textContent : ''; })()`
		waitJS(t, ctx, "released", value+` === 'released'`)
		fake.push("device", fakeDevice{Name: "button1", Driver: "sim-button", Node: "ews1", State: "on", Value: true, Updated: now, Simulated: true})
		waitJS(t, ctx, "pressed", value+` === 'pressed'`)
		if evalJS[bool](t, ctx, card("button1")+`.textContent.includes('false') || `+card("button1")+`.textContent.includes('true')`) {
			t.Fatal("the button's card shows a bare boolean")
		}
	})

	t.Run("the board's log in the Log panel", func(t *testing.T) {
		run(t, ctx, "board tab", chromedp.Navigate(srv.URL+"/#board"))
		waitJS(t, ctx, "needs login", `document.getElementById('board-log').textContent.includes('Log in')`)
		// the cluster CA offered on the Board tab, with its fingerprint (issue 47)
		waitJS(t, ctx, "the CA", `document.getElementById('board-ca') !== null && document.getElementById('board-ca').getAttribute('href') === '/api/cluster/ca' && document.getElementById('board-ca').getAttribute('download') === 'ca.pem' && document.getElementById('board-ca-sha').textContent === 'AB:CD:EF'`)
		run(t, ctx, "open login", chromedp.Click(chromedp.CSS(`#login-btn`)))
		waitJS(t, ctx, "dialog", `document.getElementById('login-dlg').open`)
		run(t, ctx, "log in",
			chromedp.SendKeys(chromedp.CSS(`#login-token`), goodToken),
			chromedp.Click(chromedp.CSS(`#login-submit`)))
		waitJS(t, ctx, "log lines", `document.querySelectorAll('#board-log li:not(.note)').length === 2`)
		if got := evalJS[string](t, ctx, `document.querySelector('#board-log li.lv-warn .msg').textContent`); got != "cluster: peer ews3 unreachable" {
			t.Errorf("warn line %q", got)
		}
	})

	t.Run("the create form's role picker looks like the inputs", func(t *testing.T) {
		same := evalJS[bool](t, ctx, `(() => {
			const s = getComputedStyle(document.getElementById('u-role')), i = getComputedStyle(document.getElementById('u-name'));
			return s.borderRadius === i.borderRadius && s.borderTopWidth === i.borderTopWidth && s.paddingTop === i.paddingTop;
		})()`)
		if !same {
			t.Error("the role select is not styled like the text inputs")
		}
		if d := evalJS[string](t, ctx, `getComputedStyle(document.getElementById('u-form')).display`); d != "grid" {
			t.Errorf("the create form is laid out as %q, want grid", d)
		}
	})
}
