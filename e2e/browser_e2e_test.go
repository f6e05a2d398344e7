//go:build browser

package e2e

// The real-browser end-to-end test: headless Debian chromium (chromedp) against three real
// `ews run` processes with the demo's configs (internal/tool/demo), so the test owns each process
// can kill -9 the master and start it again (TestDemoSurvivesMasterKill kills one under `ews demo`):
//
//	go test -tags browser -run TestBrowserCluster -v ./e2e/
//	EWS_SCREENSHOTS=docs/img go test -tags browser -run TestBrowserCluster -v ./e2e/   # keep screenshots
//
// Page A is on ews3 (not the master), page B on ews1 (the master, the third board): A logs in and
// toggles relay1, wired to ews2, and B must show the new state. Then ews1 is killed: A must show
// ews2 as master and the takeover in its event log, B loses its stream and shows the banner, and
// an action on a device of the dead board shows the API's error.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testbrowser"
	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/tool/demo"
)

// findChromium returns a chromium to drive, installing Debian's package when it is missing
// and the test runs as root; it skips otherwise.
func findChromium(t *testing.T) string { return testbrowser.Find(t) }

// tab is one browser page with its own cookie jar (a separate browser context).
type tab struct {
	name string
	ctx  context.Context
	errs *testbrowser.Console // its exceptions and console errors
}

// openBrowser starts one headless chromium (the launch flags of webui/browser_test.go) and
// returns a tab maker.
func openBrowser(t *testing.T) func(name string) *tab {
	t.Helper()
	return startBrowser(t, findChromium(t), 3*time.Minute)
}

// startBrowser starts headless chromium exe with extra options, for at most timeout, and
// returns a tab maker. Background tabs keep their timers and event streams running at full
// speed.
func startBrowser(t *testing.T, exe string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) func(name string) *tab {
	t.Helper()
	bctx := testbrowser.Start(t, exe, timeout, nil, append(extra,
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
	)...)
	return func(name string) *tab {
		tb := &tab{name: name, errs: &testbrowser.Console{}}
		ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(tb.errs.Listen))
		t.Cleanup(cancel)
		// open the tab now, on its own context: the first action on a chromedp context creates
		// the target and ties it to that action's context, so a step's timeout would close it
		if err := chromedp.Do(ctx); err != nil {
			t.Fatalf("page %s: open tab: %v", name, err)
		}
		tb.ctx = ctx
		return tb
	}
}

func (tb *tab) run(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	// every step is bounded on its own: a click on an element that never shows must fail this
	// step, not use up the page's context and fail every step after it
	rctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(rctx, actions...); err != nil {
		t.Fatalf("page %s: %s: %v", tb.name, what, err)
	}
}

// wait polls a JavaScript condition in the page until it holds or limit passes.
func (tb *tab) wait(t *testing.T, what, expr string, limit time.Duration) {
	t.Helper()
	wctx, cancel := context.WithTimeout(tb.ctx, limit)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		dump, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		t.Fatalf("page %s: %s: waiting for %s: %v\npage errors: %q\npage text:\n%s", tb.name, what, expr, err, tb.errs.All(), dump)
	}
}

func evalIn[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("page %s: evaluate %s: %v", tb.name, expr, err)
	}
	return v
}

// watch makes the page record in window[key] the Date.now() at which cond first holds,
// checked on every DOM change (and every 10 ms as a backstop).
func (tb *tab) watch(t *testing.T, key, cond string) {
	t.Helper()
	js := fmt.Sprintf(`(() => {
  window[%[1]q] = 0;
  const check = () => { try { if (!window[%[1]q] && (%[2]s)) { window[%[1]q] = Date.now(); obs.disconnect(); clearInterval(iv); } } catch (e) {} };
  const obs = new MutationObserver(check);
  obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  const iv = setInterval(check, 10);
  check();
})()`, key, cond)
	tb.run(t, "watch "+key, chromedp.Evaluate[chromedp.Void](js))
}

// card returns a JS expression for the card of the named device.
func cardJS(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#device-list .card')].find(c => c.dataset.name === %q)`, name)
}

func relayOn(name string) string {
	c := cardJS(name)
	return fmt.Sprintf(`(%[1]s) && (%[1]s).querySelector('input.sw').checked && (%[1]s).querySelector('.badge').textContent === 'on'`, c)
}

func (tb *tab) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	tb.run(t, "dismiss toasts", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click()); window.scrollTo(0, 0)`))
	tb.run(t, "settle", chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise))
	png, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("page %s: screenshot: %v", tb.name, err)
	}
	if len(png) < 1000 {
		t.Fatalf("%s: %d bytes", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserCluster(t *testing.T) {
	boards := demoCluster(t, 3)
	ews1, ews3 := boards[0], boards[2]
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	v1 := ews1.mustView(t)

	shots := os.Getenv("EWS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	newTab := openBrowser(t)
	a, b := newTab("A@ews3"), newTab("B@ews1")
	for _, tb := range []*tab{a, b} {
		tb.run(t, "open the UI",
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
					page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.alert = () => { window.__alert = true; };`})
				return err
			}))
	}
	a.run(t, "open ews3", chromedp.Navigate("http://"+ews3.http+"/#devices"))
	b.run(t, "open ews1", chromedp.Navigate("http://"+ews1.http+"/#devices"))
	for _, tb := range []*tab{a, b} {
		tb.wait(t, "six device cards", `document.querySelectorAll('#device-list .card').length === 6`, 15*time.Second)
		tb.wait(t, "boards grouped", `[...document.querySelectorAll('#device-list .group')].map(g => g.dataset.board).join() === 'ews1,ews2,ews3,any'`, 5*time.Second)
		tb.wait(t, "connected", `document.getElementById('banner').hidden && window.ews.state.connected`, 5*time.Second)
	}
	a.wait(t, "self ews3", `document.getElementById('self').textContent.includes('ews3')`, 5*time.Second)
	b.wait(t, "self ews1", `document.getElementById('self').textContent.includes('ews1')`, 5*time.Second)

	t.Run("read-only until login", func(t *testing.T) {
		a.wait(t, "read-only notice", `!document.getElementById('readonly').hidden && `+cardJS("relay1")+`.querySelector('input.sw').disabled`, 5*time.Second)
	})

	t.Run("wrong token refused with a message", func(t *testing.T) {
		a.run(t, "open login", chromedp.Click(chromedp.CSS(`#login-btn`)))
		a.wait(t, "dialog", `document.getElementById('login-dlg').open`, 5*time.Second)
		a.run(t, "wrong token", chromedp.SendKeys(chromedp.CSS(`#login-token`), "not-the-demo-token"), chromedp.Click(chromedp.CSS(`#login-submit`)))
		a.wait(t, "error shown", `!document.getElementById('login-err').hidden && document.getElementById('login-err').textContent.includes('401')`, 5*time.Second)
		msg := evalIn[string](t, a, `document.getElementById('login-err').textContent`)
		t.Logf("wrong token: %q", msg)
		if !strings.Contains(msg, "invalid credentials") {
			t.Errorf("login error %q does not carry the board's reason", msg)
		}
		if !evalIn[bool](t, a, `document.getElementById('login-dlg').open && !document.getElementById('readonly').hidden`) {
			t.Fatal("a wrong token closed the dialog or unlocked the controls")
		}
	})

	t.Run("login", func(t *testing.T) {
		a.run(t, "right token",
			chromedp.Evaluate[chromedp.Void](`document.getElementById('login-token').value = ''`),
			chromedp.SendKeys(chromedp.CSS(`#login-token`), demo.Token),
			chromedp.Click(chromedp.CSS(`#login-submit`)))
		a.wait(t, "logged in", `!document.getElementById('login-dlg').open && document.getElementById('readonly').hidden && !`+cardJS("relay1")+`.querySelector('input.sw').disabled`, 5*time.Second)
		if c := evalIn[string](t, a, `document.cookie`); strings.Contains(c, "ews_session") {
			t.Fatalf("session cookie readable by script: %q", c)
		}
		// Page B has its own cookie jar: still read-only.
		if !evalIn[bool](t, b, `!document.getElementById('readonly').hidden`) {
			t.Fatal("page B is not read-only")
		}
	})

	t.Run("toggle on ews3 shows on ews1", func(t *testing.T) {
		if evalIn[bool](t, b, relayOn("relay1")) {
			t.Fatal("relay1 already on in page B")
		}
		b.watch(t, "__seenAt", relayOn("relay1"))
		a.run(t, "stamp clicks", chromedp.Evaluate[chromedp.Void](
			cardJS("relay1")+`.querySelector('input.sw').addEventListener('click', () => { window.__clickAt = Date.now(); }, { once: true, capture: true })`))
		a.run(t, "click relay1", chromedp.Click(chromedp.JSPath(cardJS("relay1")+`.querySelector('input.sw')`)))
		a.wait(t, "relay1 on in A", relayOn("relay1"), 5*time.Second)
		b.wait(t, "relay1 on in B", `window.__seenAt > 0`, 10*time.Second)
		clickAt := evalIn[float64](t, a, `window.__clickAt || 0`)
		seenAt := evalIn[float64](t, b, `window.__seenAt`)
		if clickAt == 0 {
			t.Fatal("click not stamped")
		}
		d := time.Duration(seenAt-clickAt) * time.Millisecond
		t.Logf("relay1 (wired to ews2) toggled in page A on ews3, seen in page B on ews1 after %v", d)
		if d > time.Second {
			t.Errorf("propagation A -> B took %v, want within 1s", d)
		}
		a.screenshot(t, shots, "real-devices.png")
	})

	t.Run("kill -9 the master", func(t *testing.T) {
		a.run(t, "cluster tab", chromedp.Click(chromedp.CSS(`#tab-cluster`)))
		a.wait(t, "three rows", `document.querySelectorAll('#boards .row:not(.hdr)').length === 3`, 5*time.Second)
		a.wait(t, "ews1 master", `document.querySelector('#boards .row[data-board="ews1"] .c-role').textContent.includes('master')`, 5*time.Second)
		took := `[...document.querySelectorAll('#log li')].some(li => li.textContent.includes('ews2 took over as master') && li.textContent.includes('was ews1'))`
		newMaster := `document.querySelector('#boards .row[data-board="ews2"] .c-role').textContent.includes('master')`
		a.watch(t, "__tookAt", took)
		a.watch(t, "__masterAt", newMaster)
		killAt := time.Now()
		ews1.kill9()
		a.wait(t, "takeover in the log", `window.__tookAt > 0`, 15*time.Second)
		a.wait(t, "ews2 master row", `window.__masterAt > 0`, 5*time.Second)
		a.wait(t, "ews1 down", `document.querySelector('#boards .row[data-board="ews1"] .c-state').textContent === 'down'`, 10*time.Second)
		tookAt := evalIn[float64](t, a, `window.__tookAt`)
		t.Logf("takeover shown in page A %v after kill -9 of ews1 (tmax 1s)", time.Duration(tookAt-float64(killAt.UnixMilli()))*time.Millisecond)
		head := evalIn[string](t, a, `document.getElementById('cluster-head').textContent`)
		row := evalIn[string](t, a, `document.querySelector('#boards .row[data-board="ews1"]').textContent`)
		t.Logf("page A head %q; ews1 row %q", head, row)
		v := ews3.mustView(t)
		if v.Master != "ews2" || v.Epoch <= v1.Epoch {
			t.Fatalf("ews3's table: %+v; want master ews2 at an epoch above %d", v, v1.Epoch)
		}
		if n := evalIn[int](t, a, fmt.Sprintf(`[...document.querySelectorAll('#log li')].filter(li => li.textContent.includes('(epoch %d, was ews1)')).length`, v.Epoch)); n != 1 {
			t.Errorf("takeover to epoch %d logged %d times, want once", v.Epoch, n)
		}
		a.screenshot(t, shots, "real-cluster-takeover.png")
	})

	t.Run("dropped stream shows the banner", func(t *testing.T) {
		// Page B's board was ews1, now dead: its stream is gone and it cannot reconnect.
		b.wait(t, "banner", `!document.getElementById('banner').hidden && document.getElementById('banner-text').textContent.length > 0 && document.body.classList.contains('offline')`, 10*time.Second)
		t.Logf("page B banner: %q", evalIn[string](t, b, `document.getElementById('banner-text').textContent`))
	})

	t.Run("the page comes back with its board", func(t *testing.T) {
		// ews1 restarts (preempt = false: it rejoins as a follower); page B's stream reconnects
		// ("Retry now" skips the rest of the backoff) and shows the cluster under ews2.
		ews1.start(t, ewsBinary(t))
		waitAgree(t, "ews1 back under ews2", 30*time.Second, boards, "ews2", 2)
		// the page may already have reconnected on its own backoff (the banner is then hidden and
		// there is nothing to click): press "Retry now" only while the banner is up
		b.run(t, "retry now", chromedp.Evaluate[chromedp.Void](`(() => { if (!document.getElementById('banner').hidden) document.getElementById('banner-retry').click(); })()`))
		b.wait(t, "reconnected", `document.getElementById('banner').hidden && window.ews.state.connected && window.ews.state.cluster.master === 'ews2'`, 15*time.Second)
	})

	t.Run("api error is shown", func(t *testing.T) {
		// temp1 is wired to ews1, which is down again: reading it fails and the page says why.
		ews1.kill9()
		testutil.EventuallyWithin(t, "ews1 down on ews3", 10*time.Second, func() bool {
			v, err := ews3.view()
			if err != nil {
				return false
			}
			for _, n := range v.Nodes {
				if n.Name == "ews1" {
					return n.Runstate == "down"
				}
			}
			return false
		})
		a.run(t, "devices tab", chromedp.Click(chromedp.CSS(`#tab-devices`)))
		// the mirrors mark ews1's devices stale after their grace (3 s), which redraws the card:
		// click once that has happened, so the click does not land on a card being replaced
		a.wait(t, "temp1 marked stale", cardJS("temp1")+` && `+cardJS("temp1")+`.textContent.includes('unreachable')`, 15*time.Second)
		a.wait(t, "temp1 card", cardJS("temp1")+` && !`+cardJS("temp1")+`.querySelector('button').disabled`, 5*time.Second)
		clicked := time.Now()
		a.run(t, "read temp1", chromedp.Click(chromedp.JSPath(cardJS("temp1")+`.querySelector('button')`)))
		a.wait(t, "error toast", `[...document.querySelectorAll('.toast.bad')].some(e => /\((502|503|504)\)/.test(e.textContent))`, 15*time.Second)
		t.Logf("error shown %v after the click (the master waits queue_timeout for the dead board)", time.Since(clicked).Round(10*time.Millisecond))
		a.wait(t, "card error", cardJS("temp1")+`.querySelector('.card-err').textContent.length > 0`, 5*time.Second)
		t.Logf("toast: %q", evalIn[string](t, a, `[...document.querySelectorAll('.toast.bad')].map(e => e.textContent).join(' | ')`))
	})

	t.Run("screenshots", func(t *testing.T) {
		b.screenshot(t, shots, "real-disconnected.png")
	})

	for _, tb := range []*tab{a, b} {
		if evalIn[bool](t, tb, `window.__alert === true`) {
			t.Errorf("page %s: alert() ran", tb.name)
		}
		for _, e := range tb.errs.All() {
			if strings.HasPrefix(e, "exception") {
				t.Errorf("page %s threw: %s", tb.name, e)
			}
		}
	}
}

// A device name with markup in it never reaches a page from a config: the config refuses it (names
// are letters, digits and - _ . only) and the board does not start. The web UI's escaping of names
// that arrive anyway is tested against the fake board in webui/browser_test.go.
func TestBrowserClusterMarkupDeviceName(t *testing.T) {
	layout := demo.Boards(1, freeBase(t, 1))
	dir := t.TempDir()
	doc := strings.Replace(demo.Config(layout, 0, config.NewKey(), dir), `name = "relay1"`, `name = "<img src=x onerror=alert(1)>"`, 1)
	doc = strings.ReplaceAll(doc, `interlock = ["relay1"]`, `interlock = []`)
	path := filepath.Join(dir, "ews1.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ewsBinary(t), "run", "--config", path).CombinedOutput()
	if err == nil {
		t.Fatalf("ews run started with a device named with markup:\n%s", out)
	}
	if !strings.Contains(string(out), "device[0].name") || !strings.Contains(string(out), "onerror") {
		t.Fatalf("ews run refused the config without naming the key: %v\n%s", err, out)
	}
	t.Logf("refused: %s", strings.TrimSpace(string(out)))
}
