//go:build browser

package webui

// The browser test drives Debian's chromium (headless) through chromedp against a fake board:
//
//	go test -tags browser -run TestBrowser ./webui/
//	EWS_SCREENSHOTS=docs/img go test -tags browser -run TestBrowser ./webui/   # also keep screenshots
//
// It installs chromium with apt-get when it is missing and it runs as root; it skips only when
// chromium cannot be found or installed.

import (
	"context"
	"fmt"
	"github.com/ews-firmware/ews/internal/testkit/testbrowser"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const (
	goodToken = "s3cret-token"
	xssName   = "<img src=x onerror=alert(1)>"
)

func findChromium(t *testing.T) string { return testbrowser.Find(t) }

// pageLog collects the page's uncaught exceptions, console errors and warnings.
var pageLog = &testbrowser.Console{Warnings: true}

// browser starts a headless chromium with a fresh profile and returns a tab context.
func browser(t *testing.T) context.Context {
	t.Helper()
	return testbrowser.Start(t, findChromium(t), 90*time.Second, []chromedp.ContextOption{chromedp.WithListener(pageLog.Listen)})
}

// run runs actions, failing the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitJS waits until a JavaScript expression is true; on failure it prints the page's text.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	waitShowing(t, ctx, what, expr, "page text", `document.body.innerText.slice(0, 1500)`)
}

// waitCardJS is waitJS for one device's card: on failure it prints that card's text instead.
func waitCardJS(t *testing.T, ctx context.Context, name, what, expr string) {
	t.Helper()
	waitShowing(t, ctx, what, expr, "card "+name, `(() => { const c = `+card(name)+`; return c ? c.className + ' | ' + c.innerText : 'no card'; })()`)
}

// waitShowing waits up to 10 s until expr is true; on failure it prints label and the string show
// evaluates to, the page's errors, and what was awaited last: a log cut to its tail still names it.
func waitShowing(t *testing.T, ctx context.Context, what, expr, label, show string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](show))
		t.Fatalf("%s:\n%s\npage errors: %q\n%s: waiting for %s: %v", label, dump, pageLog.All(), what, expr, err)
	}
}

// clickAction clicks a control of a device's card once it is enabled and fails at once, naming what
// lies under the pointer, unless the fake board then receives the action at path: a click that
// never reached the page is told apart from an answer shown wrong.
func clickAction(t *testing.T, ctx context.Context, fake *fakeBoard, what, control, path string) {
	t.Helper()
	waitJS(t, ctx, what+": enabled", control+` && !`+control+`.disabled`)
	before := fake.postsTo(path)
	run(t, ctx, what, chromedp.Click(chromedp.JSPath(control)))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := fake.waitPost(wctx, path, before); err != nil {
		under, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const b = `+control+`; const r = b.getBoundingClientRect();
			const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
			return JSON.stringify({rect: [r.x, r.y, r.width, r.height], disabled: b.disabled, under: e ? e.outerHTML.slice(0, 200) : null,
				dialog: !!document.querySelector('dialog[open]'), banner: !document.getElementById('banner').hidden}); })()`))
		t.Fatalf("%s: %v; the control now: %s", what, err, under)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// card returns a JS expression for the card of the named device.
func card(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#device-list .card')].find(c => c.dataset.name === %q)`, name)
}

func TestBrowser(t *testing.T) {
	fake := newFakeBoard(goodToken)
	srv := httptest.NewServer(fake.routes(Handler()))
	defer srv.Close()
	defer fake.dropStreams(false) // end open streams before srv.Close waits for them
	ctx := browser(t)

	// A board that keeps serving requests: completed counters rise, so the requests/s chart moves.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			fake.updateCluster(func(c *fakeCluster) {
				c.Completed["control"] += 3 + i%4
				c.Completed["browse"] += 8 + (i*7)%9
				c.Queue["browse"] = 3 + (i*5)%9
				c.Queue["control"] = i % 3
			})
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	run(t, ctx, "open the UI",
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			// Any alert() a data-borne script might run is recorded instead of blocking the page.
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.alert = () => { window.__xss = true; };`})
			return err
		}),
		chromedp.Navigate(srv.URL+"/#devices"))

	n := len(fake.snapshotDevices())
	t.Run("renders boards and devices", func(t *testing.T) {
		waitJS(t, ctx, "cards", fmt.Sprintf(`document.querySelectorAll('#device-list .card').length === %d`, n))
		groups := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#device-list .group')].map(g => g.dataset.board)`)
		if strings.Join(groups, ",") != "ews1,ews2,ews3,any" {
			t.Fatalf("groups %v, want boards in rank order then shared-bus devices", groups)
		}
		waitJS(t, ctx, "sensor value", card("tank")+`.querySelector('.value').textContent.includes('18.25')`)
		waitJS(t, ctx, "error state", card("meter")+`.classList.contains('is-error') && `+card("meter")+`.querySelector('.card-err').textContent.includes('modbus: timeout')`)
		waitJS(t, ctx, "slider", card("led")+`.querySelector('input[type=range]').value === '40'`)
		waitJS(t, ctx, "simulated device", card("tank")+`.querySelector('.driver').textContent === 'ds18b20 · simulated'`)
		waitJS(t, ctx, "real device", card("relay1")+`.querySelector('.driver').textContent === 'gpio-out'`)
		waitJS(t, ctx, "restored mark", card("relay2")+`.querySelector('.tag.restored:not([hidden])')?.textContent === 'restored' && `+card("relay1")+`.querySelector('.tag.restored').hidden`)
	})

	t.Run("language switch", func(t *testing.T) {
		run(t, ctx, "switch to Chinese", chromedp.Click(chromedp.CSS(`#lang`)))
		waitJS(t, ctx, "zh", `document.getElementById('tab-devices').textContent === '设备' && document.documentElement.lang === 'zh-CN'`)
		run(t, ctx, "reload", chromedp.Reload())
		waitJS(t, ctx, "zh remembered", `document.getElementById('tab-cluster').textContent === '集群' && localStorage.getItem('ews.lang') === 'zh'`)
		waitJS(t, ctx, "zh cards", fmt.Sprintf(`document.querySelectorAll('#device-list .card').length === %d`, n))
		run(t, ctx, "back to English", chromedp.Click(chromedp.CSS(`#lang`)))
		waitJS(t, ctx, "en", `document.getElementById('tab-devices').textContent === 'Devices' && localStorage.getItem('ews.lang') === 'en'`)
	})

	t.Run("device name with markup stays text", func(t *testing.T) {
		waitJS(t, ctx, "xss card", card(xssName)+`.querySelector('.name').textContent === `+fmt.Sprintf("%q", xssName))
		if imgs := evalJS[int](t, ctx, `document.querySelectorAll('#device-list img, #device-list script').length`); imgs != 0 {
			t.Fatalf("%d img/script elements inside the device list", imgs)
		}
		if evalJS[bool](t, ctx, `window.__xss === true`) {
			t.Fatal("a script from a device name ran")
		}
		fake.mu.Lock()
		hits := fake.paths["/x"]
		fake.mu.Unlock()
		if hits != 0 {
			t.Fatalf("the page fetched /x %d times: the name was parsed as HTML", hits)
		}
	})

	t.Run("read-only without login", func(t *testing.T) {
		waitJS(t, ctx, "notice", `!document.getElementById('readonly').hidden`)
		if !evalJS[bool](t, ctx, card("relay1")+`.querySelector('input.sw').disabled`) {
			t.Fatal("relay switch enabled without credentials")
		}
	})

	t.Run("wrong token refused", func(t *testing.T) {
		run(t, ctx, "open login", chromedp.Click(chromedp.CSS(`#login-btn`)))
		waitJS(t, ctx, "dialog", `document.getElementById('login-dlg').open`)
		run(t, ctx, "type wrong token",
			chromedp.SendKeys(chromedp.CSS(`#login-token`), "not-the-token"),
			chromedp.Click(chromedp.CSS(`#login-submit`)))
		waitJS(t, ctx, "login error", `!document.getElementById('login-err').hidden && document.getElementById('login-err').textContent.includes('wrong token')`)
		if !evalJS[bool](t, ctx, `document.getElementById('login-dlg').open && !document.getElementById('readonly').hidden`) {
			t.Fatal("a wrong token closed the dialog or unlocked the controls")
		}
	})

	t.Run("right token logs in", func(t *testing.T) {
		run(t, ctx, "type token",
			chromedp.Evaluate[chromedp.Void](`document.getElementById('login-token').value = ''`),
			chromedp.SendKeys(chromedp.CSS(`#login-token`), goodToken),
			chromedp.Click(chromedp.CSS(`#login-submit`)))
		waitJS(t, ctx, "logged in", `!document.getElementById('login-dlg').open && document.getElementById('readonly').hidden && !document.getElementById('logout-btn').hidden`)
		waitJS(t, ctx, "controls unlocked", `!`+card("relay1")+`.querySelector('input.sw').disabled`)
		// The cookie is HttpOnly: the page's script must not see it.
		if c := evalJS[string](t, ctx, `document.cookie`); strings.Contains(c, "ews_session") {
			t.Fatalf("session cookie readable by script: %q", c)
		}
	})

	t.Run("toggle a relay", func(t *testing.T) {
		run(t, ctx, "click relay1", chromedp.Click(chromedp.JSPath(card("relay1")+`.querySelector('input.sw')`)))
		waitJS(t, ctx, "relay on", card("relay1")+`.querySelector('input.sw').checked && `+card("relay1")+`.querySelector('.badge').textContent === 'on'`)
		fake.mu.Lock()
		posts := append([]fakePost(nil), fake.posts...)
		fake.mu.Unlock()
		if len(posts) != 1 {
			t.Fatalf("posts %+v, want one", posts)
		}
		p := posts[0]
		if p.Path != "/api/devices/relay1/turn_on?" || !p.Authed || p.Idem == "" || p.CSRF == "" {
			t.Fatalf("post %+v: want turn_on with session, Idempotency-Key and X-Requested-With", p)
		}
	})

	t.Run("503 is retried with the same key", func(t *testing.T) {
		fake.mu.Lock()
		fake.shed["pump"] = 1
		before := len(fake.posts)
		fake.mu.Unlock()
		run(t, ctx, "click pump", chromedp.Click(chromedp.JSPath(card("pump")+`.querySelector('input.sw')`)))
		waitJS(t, ctx, "pump on", card("pump")+`.querySelector('.badge').textContent === 'on' && !`+card("pump")+`.classList.contains('busy')`)
		fake.mu.Lock()
		posts := append([]fakePost(nil), fake.posts[before:]...)
		fake.mu.Unlock()
		if len(posts) != 2 || posts[0].Idem == "" || posts[0].Idem != posts[1].Idem || posts[1].Path != "/api/devices/pump/turn_on?" {
			t.Fatalf("posts %+v: want the same turn_on twice under one Idempotency-Key", posts)
		}
	})

	t.Run("api error is shown", func(t *testing.T) {
		run(t, ctx, "read meter", chromedp.Click(chromedp.JSPath(card("meter")+`.querySelector('button')`)))
		waitJS(t, ctx, "toast", `[...document.querySelectorAll('.toast.bad')].some(e => e.textContent.includes('timeout after 500ms') && e.textContent.includes('502'))`)
		waitJS(t, ctx, "card error", card("meter")+`.querySelector('.card-err').textContent.includes('timeout after 500ms')`)
	})

	t.Run("live device change", func(t *testing.T) {
		for i, v := range []float64{18.5, 19.0, 19.75, 20.5, 21.0, 21.25, 22.5} {
			fake.mu.Lock()
			var d fakeDevice
			for _, x := range fake.devices {
				if x.Name == "tank" {
					x.Value = v
					x.Updated = time.Now().Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano)
					d = *x
				}
			}
			fake.mu.Unlock()
			fake.push("device", d)
		}
		waitJS(t, ctx, "new reading", card("tank")+`.querySelector('.value').textContent.includes('22.5')`)
		waitJS(t, ctx, "sparkline", `!`+card("tank")+`.querySelector('canvas.spark').hidden`)
	})

	t.Run("long device list stays usable", func(t *testing.T) {
		orig := fake.snapshotDevices()
		var many []*fakeDevice
		for i := range orig {
			many = append(many, &orig[i])
		}
		for i := range 600 {
			many = append(many, &fakeDevice{Name: fmt.Sprintf("sensor-%04d", i), Driver: "sim-sensor", Node: fmt.Sprintf("ews%d", 1+i%3), State: "ok", Value: float64(i) / 10, Unit: "°C"})
		}
		fake.setDevices(many)
		waitJS(t, ctx, "600 more cards", fmt.Sprintf(`document.querySelectorAll('#device-list .card').length === %d`, len(many)))
		run(t, ctx, "filter", chromedp.SendKeys(chromedp.CSS(`#filter`), "sensor-0420"))
		waitJS(t, ctx, "filtered", `[...document.querySelectorAll('#device-list .card')].filter(c => !c.hidden).length === 1`)
		run(t, ctx, "clear filter", chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''`),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').dispatchEvent(new Event('input'))`))
		restored := make([]*fakeDevice, len(orig))
		for i := range orig {
			restored[i] = &orig[i]
		}
		fake.setDevices(restored)
		waitJS(t, ctx, "list restored", fmt.Sprintf(`document.querySelectorAll('#device-list .card').length === %d && [...document.querySelectorAll('#device-list .card')].every(c => !c.hidden)`, n))
	})

	t.Run("cluster view and takeover", func(t *testing.T) {
		run(t, ctx, "cluster tab", chromedp.Click(chromedp.CSS(`#tab-cluster`)))
		waitJS(t, ctx, "rows", `document.querySelectorAll('#boards .row:not(.hdr)').length === 3`)
		waitJS(t, ctx, "master row", `document.querySelector('#boards .row[data-board="ews1"] .c-role').textContent.includes('master')`)
		waitJS(t, ctx, "links", `document.querySelector('#boards .row[data-board="ews3"] .c-links').textContent.includes('4 / 4')`)
		waitJS(t, ctx, "queue", `document.querySelectorAll('#queue .qrow').length === 2`)
		if !evalJS[bool](t, ctx, `document.getElementById('log-empty').hidden === (document.querySelectorAll('#log li').length > 0)`) {
			t.Fatal("'no events yet' is shown with events, or hidden without any")
		}
		if h := evalJS[string](t, ctx, `document.querySelector('#boards .row[data-board="ews1"] .bname').href`); h != "http://127.0.0.1:8081/#board" {
			t.Fatalf("ews1's name links to %q, want its own page http://127.0.0.1:8081/#board", h)
		}
		if tip := evalJS[string](t, ctx, `document.querySelector('#boards .hdr [data-i18n="links"]').title`); !strings.Contains(tip, "linknum / capacity") {
			t.Fatalf("LINKS header title %q: want it explained as linknum / capacity", tip)
		}
		if head := evalJS[string](t, ctx, `document.getElementById('cluster-head').textContent`); strings.Contains(head, "table v") {
			t.Fatalf("cluster head %q still shows the bare table version", head)
		}
		waitJS(t, ctx, "simulated board", `[...document.querySelectorAll('#boards .row .c-name .tag:not([hidden])')].map(e => e.closest('.row').dataset.board + ':' + e.textContent).sort().join() === 'ews2:this board,ews3:simulated'`)
		fake.updateCluster(func(c *fakeCluster) {
			c.Epoch, c.Master = 2, "ews2"
			c.Nodes[0].Runstate, c.Nodes[0].LastSeenMS = "down", 1500
		})
		fake.push("takeover", map[string]any{"epoch": 2, "master": "ews2", "previous": "ews1"})
		waitJS(t, ctx, "takeover logged", `[...document.querySelectorAll('#log li')].some(li => li.textContent.includes('ews2 took over as master (epoch 2, was ews1)'))`)
		waitJS(t, ctx, "new master", `document.querySelector('#boards .row[data-board="ews2"] .c-role').textContent.includes('master') && document.querySelector('#boards .row[data-board="ews1"] .c-state').textContent === 'down'`)
		if got := evalJS[int](t, ctx, `[...document.querySelectorAll('#log li')].filter(li => li.textContent.includes('epoch 2')).length`); got != 1 {
			t.Fatalf("takeover to epoch 2 logged %d times, want once", got)
		}
		// A board whose credentials differ from the master's is marked on its row, and only it.
		const mark = `#boards .row[data-board="%s"] .auth-mismatch`
		if evalJS[bool](t, ctx, fmt.Sprintf(`!document.querySelector('`+mark+`').hidden`, "ews3")) {
			t.Fatal("auth mismatch shown before the table says so")
		}
		fake.updateCluster(func(c *fakeCluster) { c.Nodes[2].AuthMismatch = true })
		waitJS(t, ctx, "auth mismatch shown", fmt.Sprintf(`!document.querySelector('`+mark+`').hidden && document.querySelector('`+mark+`').textContent === 'credentials differ' && document.querySelector('`+mark+`').hidden`, "ews3", "ews3", "ews2"))
		fake.updateCluster(func(c *fakeCluster) { c.Nodes[2].AuthMismatch = false })
		waitJS(t, ctx, "auth mismatch cleared", fmt.Sprintf(`document.querySelector('`+mark+`').hidden`, "ews3"))
		if !evalJS[bool](t, ctx, `document.getElementById('log-empty').hidden`) {
			t.Fatal("'no events yet' still shown after the takeover was logged")
		}
	})

	// Paper 003's monitoring table: disk use and response time beside cpu and memory, the
	// integrated policy's limits marked while it runs, and figures a board could not read as "?".
	t.Run("monitoring table", func(t *testing.T) {
		run(t, ctx, "cluster tab", chromedp.Click(chromedp.CSS(`#tab-cluster`)))
		const fig = `document.querySelector('#boards .row[data-board="%s"] .ld[data-fig="%s"]')`
		txt := func(board, f string) string {
			return evalJS[string](t, ctx, fmt.Sprintf(fig+`.querySelector('.num').textContent`, board, f))
		}
		waitJS(t, ctx, "disk shown", fmt.Sprintf(fig+`.textContent.includes('86%%')`, "ews3", "disk"))
		if got := txt("ews2", "rt"); got != "12 ms" {
			t.Fatalf("ews2 rt %q, want 12 ms", got)
		}
		if got := txt("ews1", "rt"); got != "4.2 ms" {
			t.Fatalf("ews1 rt %q, want 4.2 ms", got)
		}
		if n := evalJS[int](t, ctx, `[...document.querySelectorAll('#boards .limit')].filter(e => !e.hidden).length`); n != 0 {
			t.Fatalf("%d limit marks without the integrated policy", n)
		}
		if evalJS[bool](t, ctx, fmt.Sprintf(fig+`.querySelector('.meter').classList.contains('warn')`, "ews2", "disk")) {
			t.Fatal("ews2's disk (50%) marked without a limit")
		}
		fake.updateCluster(func(c *fakeCluster) {
			c.Policy = "integrated"
			c.Limits = map[string]float64{"cpu": 0.5, "mem": 0.8, "disk": 0.45, "rt": 100, "cpu_overload": 0.7}
			c.Nodes[1].LoadUnknown = []string{"disk_used", "cpu_mhz"}
		})
		waitJS(t, ctx, "limit marks", `[...document.querySelectorAll('#boards .limit')].filter(e => !e.hidden).length === 9`)
		if got := evalJS[string](t, ctx, fmt.Sprintf(fig+`.querySelector('.limit').style.left`, "ews1", "cpu")); got != "calc(50% - 1px)" {
			t.Fatalf("cpu limit mark at %q, want 50%%", got)
		}
		// over a limit: ews3's cpu (91% > 50%) and disk (86% > 45%), and its rt (140 ms > 100 ms)
		waitJS(t, ctx, "over limits", fmt.Sprintf(fig+`.querySelector('.meter').classList.contains('warn') && `+fig+`.querySelector('.meter').classList.contains('warn') && `+fig+`.querySelector('.num').classList.contains('warn')`, "ews3", "cpu", "ews3", "disk", "ews3", "rt"))
		if got := txt("ews3", "rt"); got != "140 ms / 100" {
			t.Fatalf("ews3 rt %q, want 140 ms / 100", got)
		}
		if evalJS[bool](t, ctx, fmt.Sprintf(fig+`.querySelector('.meter').classList.contains('warn')`, "ews1", "mem")) {
			t.Fatal("ews1's memory (31%) marked over its 80% limit")
		}
		// a figure the board could not read is "?", not 0%
		waitJS(t, ctx, "unknown disk", fmt.Sprintf(fig+`.querySelector('.num').textContent === '?' && `+fig+`.classList.contains('unknown')`, "ews2", "disk", "ews2", "disk"))
		if got := txt("ews2", "cpu"); got != "18%" {
			t.Fatalf("ews2 cpu %q, want 18%% (only disk_used is unknown)", got)
		}
		// rt_ms and clock_offset_ms come with some cluster events only: a row without them
		// keeps its board's last known figures instead of falling back to "–" (issue 47)
		off := int64(-1500)
		fake.updateCluster(func(c *fakeCluster) { c.Nodes[2].ClockOffset = &off })
		waitJS(t, ctx, "clock shown", fmt.Sprintf(fig+`.querySelector('.num').textContent === '\u22121.5 s'`, "ews3", "clock"))
		fake.updateCluster(func(c *fakeCluster) {
			c.Policy, c.Limits = "", nil
			c.Nodes[1].LoadUnknown = nil
			c.Nodes[1].RTMs = 0
			c.Nodes[2].ClockOffset = nil
		})
		waitJS(t, ctx, "limits gone", `[...document.querySelectorAll('#boards .limit')].filter(e => !e.hidden).length === 0`)
		if got := txt("ews2", "rt"); got != "12 ms" {
			t.Fatalf("ews2 rt after an event without it %q, want the last known 12 ms", got)
		}
		if got := txt("ews3", "clock"); got != "\u22121.5 s" {
			t.Fatalf("ews3 clock after an event without it %q, want the last known \u22121.5 s", got)
		}
		if !evalJS[bool](t, ctx, fmt.Sprintf(fig+`.querySelector('.num').classList.contains('warn')`, "ews3", "clock")) {
			t.Fatal("ews3's kept clock offset (1.5 s) not marked")
		}
	})

	t.Run("no-board names the board", func(t *testing.T) {
		// door is wired to ews1, down since the takeover; relay1's ews2 runs, so no board can take it.
		fake.mu.Lock()
		fake.noBoard["door"], fake.noBoard["relay1"] = true, true
		fake.mu.Unlock()
		defer func() {
			fake.mu.Lock()
			delete(fake.noBoard, "door")
			delete(fake.noBoard, "relay1")
			fake.mu.Unlock()
		}()
		run(t, ctx, "devices tab", chromedp.Click(chromedp.CSS(`#tab-devices`)))
		waitJS(t, ctx, "devices shown", `!document.getElementById('view-devices').hidden`)
		run(t, ctx, "dismiss toasts", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click())`))
		waitJS(t, ctx, "no toasts yet", `document.querySelectorAll('#toasts .toast').length === 0`)
		clickAction(t, ctx, fake, "read door", card("door")+`.querySelector('button')`, "/api/devices/door/read?")
		waitCardJS(t, ctx, "door", "board is down", card("door")+`.querySelector('.card-err').textContent.includes('board ews1 is down (503)')`)
		// the door's failure left a toast for 15 s, fixed at the bottom right: where relay1's switch
		// lands after the scroll depends on the window, and a click on the toast toggles nothing
		run(t, ctx, "dismiss the door's toast", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click())`))
		waitJS(t, ctx, "no toasts", `document.querySelectorAll('#toasts .toast').length === 0`)
		clickAction(t, ctx, fake, "toggle relay1", card("relay1")+`.querySelector('input.sw')`, "/api/devices/relay1/turn_off?")
		waitCardJS(t, ctx, "relay1", "no board", card("relay1")+`.querySelector('.card-err').textContent.includes('no board can take it (503)')`)
		if evalJS[bool](t, ctx, `document.body.textContent.includes('shed: no-board')`) {
			t.Fatal("the page shows the raw 'shed: no-board'")
		}
		run(t, ctx, "cluster tab", chromedp.Click(chromedp.CSS(`#tab-cluster`)))
	})

	t.Run("dark-mode toggle sticks", func(t *testing.T) {
		bg := `getComputedStyle(document.body).backgroundColor`
		before := evalJS[string](t, ctx, bg)
		system := evalJS[string](t, ctx, `matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'`)
		other := map[string]string{"dark": "light", "light": "dark"}[system]
		run(t, ctx, "toggle", chromedp.Click(chromedp.CSS(`#theme`)))
		waitJS(t, ctx, "switched", fmt.Sprintf(`document.documentElement.dataset.theme === %q && localStorage.getItem('ews.theme') === %q`, other, other))
		if after := evalJS[string](t, ctx, bg); after == before {
			t.Fatalf("background %s did not change with the theme", after)
		}
		run(t, ctx, "reload", chromedp.Reload())
		waitJS(t, ctx, "remembered", fmt.Sprintf(`document.documentElement.dataset.theme === %q && getComputedStyle(document.body).backgroundColor !== %q`, other, before))
		run(t, ctx, "toggle back", chromedp.Click(chromedp.CSS(`#theme`)))
		waitJS(t, ctx, "back", fmt.Sprintf(`getComputedStyle(document.body).backgroundColor === %q`, before))
		run(t, ctx, "forget", chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('ews.theme'); delete document.documentElement.dataset.theme`))
	})

	t.Run("disconnected banner", func(t *testing.T) {
		waitJS(t, ctx, "connected", `document.getElementById('banner').hidden`)
		if fake.openStreams() == 0 {
			t.Fatal("no open event stream")
		}
		fake.dropStreams(true)
		waitJS(t, ctx, "banner", `!document.getElementById('banner').hidden && document.getElementById('banner-text').textContent.length > 0`)
		fake.allow()
		run(t, ctx, "retry now", chromedp.Click(chromedp.CSS(`#banner-retry`)))
		waitJS(t, ctx, "reconnected", `document.getElementById('banner').hidden`)
	})

	screenshots(t, ctx)
	seen := map[string]bool{}
	for _, e := range pageLog.All() {
		if strings.HasPrefix(e, "exception") && !seen[e] {
			seen[e] = true
			t.Errorf("page threw: %s", e)
		}
	}
}

// screenshots saves each view at desktop and phone width, light and dark, to $EWS_SCREENSHOTS
// (e.g. docs/img) or a temporary directory.
func screenshots(t *testing.T, ctx context.Context) {
	dir := os.Getenv("EWS_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("EWS_SCREENSHOTS") != "" {
		// Pictures for the docs: let the requests/s chart gather a few seconds of points first.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](`Object.values(window.ews.clusterView.series).every(s => s.length >= 14)`,
			chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(25*time.Second)))
		cancel()
		if err != nil {
			t.Fatalf("chart points: %v", err)
		}
	}
	run(t, ctx, "dismiss toasts", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click())`))
	type size struct {
		name          string
		width, height int64
		scale         float64
		mobile        bool
	}
	type shot struct {
		scheme string
		sz     size
		lang   string
	}
	desktop, phone := size{"desktop", 1280, 860, 1, false}, size{"phone", 390, 844, 2, true}
	shots := []shot{{"light", desktop, "en"}, {"light", phone, "en"}, {"dark", desktop, "en"}, {"dark", phone, "en"}, {"light", desktop, "zh"}}
	for _, sh := range shots {
		scheme, sz := sh.scheme, sh.sz
		if sh.lang == "zh" {
			run(t, ctx, "switch to Chinese", chromedp.Click(chromedp.CSS(`#lang`)))
			waitJS(t, ctx, "zh", `document.documentElement.lang === 'zh-CN'`)
		}
		{
			for _, view := range []string{"devices", "cluster"} {
				if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
					Width: sz.width, Height: sz.height, DeviceScaleFactor: sz.scale, Mobile: sz.mobile}); err != nil {
					t.Fatal(err)
				}
				run(t, ctx, "show "+view, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q; window.scrollTo(0, 0)`, "#"+view)))
				waitJS(t, ctx, "view shown", fmt.Sprintf(`!document.getElementById('view-%s').hidden`, view))
				// Let a frame render with the new media and size, and the chart redraw.
				run(t, ctx, "settle", chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => { window.dispatchEvent(new Event('hashchange')); requestAnimationFrame(() => r(true)); }))`, chromedp.EvalAwaitPromise))
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.png", view, sz.name, scheme))
				if sh.lang != "en" {
					name = filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%s.png", view, sz.name, scheme, sh.lang))
				}
				if len(png) < 1000 {
					t.Fatalf("%s: %d bytes", name, len(png))
				}
				testutil.WriteFile(t, name, png, 0o644)
			}
		}
	}
	if _, err := chromedp.Call(ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}
