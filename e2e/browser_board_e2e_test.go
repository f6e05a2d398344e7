//go:build browser

package e2e

// The board page in a real browser against a real `ews run` board (its own copy of the binary):
// open it from the cluster table, log in, read its log, upload a rebuilt binary with another
// version string and see the version change after the restart, upload one that exits at start
// and see it rolled back, restart with a confirm:
//
//	go test -tags browser -run TestBrowserBoardPage -v ./e2e/

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/internal/tool/demo"
)

func TestBrowserBoardPage(t *testing.T) {
	v1, v2, bad := versionBinary(t, "test-1"), signedCopy(t, versionBinary(t, "test-2")), signedCopy(t, badBinary(t))
	b := ownCopyCluster(t, 1, v1)[0]
	testutil.EventuallyWithin(t, "board serving", 30*time.Second, func() bool {
		i, err := b.info()
		return err == nil && i.Runstate == "running"
	})
	newTab := openBrowser(t)
	tb := newTab("board@" + b.name)
	tb.run(t, "stub confirm", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.confirm = (m) => { window.__confirmed = m; return true; };`})
		return err
	}))
	tb.run(t, "open the cluster view", chromedp.Navigate("http://"+b.http+"/#cluster"))
	tb.wait(t, "the board in the table", `document.querySelector('#boards .row[data-board="ews1"] .bname[href]') !== null`, 15*time.Second)
	tb.run(t, "open its page from the table", chromedp.Click(chromedp.CSS(`#boards .row[data-board="ews1"] .bname`)))
	tb.wait(t, "board page shown", `location.hash === '#board' && !document.getElementById('view-board').hidden`, 10*time.Second)
	tb.wait(t, "log needs login", `document.getElementById('board-log').textContent.includes('Log in')`, 5*time.Second)
	// the version, PID and SHA-256 are for credentials only
	if v := evalIn[string](t, tb, `document.querySelector('#board-facts dd[data-k="bVersion"]')?.textContent || ''`); v == "test-1" {
		t.Fatalf("the board page shows the version %q before a login", v)
	}

	tb.run(t, "log in", chromedp.Click(chromedp.CSS(`#login-btn`)))
	tb.wait(t, "dialog", `document.getElementById('login-dlg').open`, 5*time.Second)
	tb.run(t, "token", chromedp.SendKeys(chromedp.CSS(`#login-token`), demo.Token), chromedp.Click(chromedp.CSS(`#login-submit`)))
	tb.wait(t, "version test-1", `document.querySelector('#board-facts dd[data-k="bVersion"]')?.textContent === 'test-1'`, 15*time.Second)
	tb.wait(t, "log lines", `[...document.querySelectorAll('#board-log li .msg')].some(li => li.textContent.includes('msg=serving'))`, 10*time.Second)
	t.Logf("log lines on the page: %d", evalIn[int](t, tb, `document.querySelectorAll('#board-log li').length`))

	upload := func(path string) {
		t.Helper()
		sum := fileSHA(t, path)
		tb.run(t, "pick "+path, chromedp.SetUploadFiles(chromedp.CSS(`#fw-file`), []string{path}))
		tb.wait(t, "checksum shown", `document.getElementById('fw-sum').textContent === '`+sum+`'`, 30*time.Second)
		if !evalIn[bool](t, tb, `document.getElementById('fw-upload').disabled`) {
			t.Fatal("upload enabled before the checksum was confirmed")
		}
		tb.run(t, "confirm", chromedp.Click(chromedp.CSS(`#fw-confirm`)))
		// the button stays disabled until the page has seen the board running its last upload
		// (a refresh after the restart); a click before that is lost, as it would be for a user
		tb.wait(t, "upload enabled", `!document.getElementById('fw-upload').disabled`, 30*time.Second)
		tb.run(t, "upload", chromedp.Click(chromedp.CSS(`#fw-upload`)))
	}

	t.Run("good binary: version changes after the restart", func(t *testing.T) {
		upload(v2)
		tb.wait(t, "version test-2", `document.querySelector('#board-facts dd[data-k="bVersion"]')?.textContent === 'test-2'`, 60*time.Second)
		tb.wait(t, "committed", `document.getElementById('board-upgrade').textContent.includes('committed')`, 10*time.Second)
		// The log stream reconnects to the new process by itself.
		tb.wait(t, "new process's log", `[...document.querySelectorAll('#board-log li .msg')].some(li => li.textContent.includes('upgrade committed') || li.textContent.includes('msg=serving'))`, 20*time.Second)
	})

	t.Run("bad binary: rolled back", func(t *testing.T) {
		upload(bad)
		tb.wait(t, "rolled back shown", `document.getElementById('board-upgrade').textContent.includes('rolled back')`, 60*time.Second)
		if v := evalIn[string](t, tb, `document.querySelector('#board-facts dd[data-k="bVersion"]').textContent`); v != "test-2" {
			t.Fatalf("version %q after the rollback, want test-2", v)
		}
		i, err := b.info()
		if err != nil || i.Version != "test-2" || i.Runstate != "running" {
			t.Fatalf("board after rollback: %+v %v", i, err)
		}
	})

	t.Run("restart asks to confirm", func(t *testing.T) {
		before, err := b.info()
		if err != nil {
			t.Fatal(err)
		}
		tb.run(t, "restart", chromedp.Click(chromedp.CSS(`#board-restart`)))
		tb.wait(t, "confirm asked", `typeof window.__confirmed === 'string' && window.__confirmed.includes('ews1')`, 5*time.Second)
		testutil.EventuallyWithin(t, "restarted", 30*time.Second, func() bool {
			i, err := b.info()
			return err == nil && i.Started != before.Started && i.Runstate == "running"
		})
	})
	if errs := tb.errs.All(); len(errs) > 0 {
		t.Fatalf("page errors: %q", errs)
	}
}

// TestBrowserRollingUpgrade clicks "Upgrade every board" on a follower's board page.
func TestBrowserRollingUpgrade(t *testing.T) {
	v1, v2 := versionBinary(t, "test-1"), signedCopy(t, versionBinary(t, "test-2"))
	boards := ownCopyCluster(t, 3, v1)
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	ews2 := boards[1]
	tb := openBrowser(t)("rollout@ews2")
	tb.run(t, "stub confirm", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.confirm = () => true;`})
		return err
	}))
	tb.run(t, "open ews2's board page", chromedp.Navigate("http://"+ews2.http+"/#board"))
	tb.run(t, "log in", chromedp.Click(chromedp.CSS(`#login-btn`)))
	tb.wait(t, "dialog", `document.getElementById('login-dlg').open`, 5*time.Second)
	tb.run(t, "token", chromedp.SendKeys(chromedp.CSS(`#login-token`), demo.Token), chromedp.Click(chromedp.CSS(`#login-submit`)))
	tb.wait(t, "version test-1", `document.querySelector('#board-facts dd[data-k="bVersion"]')?.textContent === 'test-1'`, 15*time.Second)
	tb.run(t, "pick", chromedp.SetUploadFiles(chromedp.CSS(`#fw-file`), []string{v2}))
	tb.wait(t, "checksum shown", `document.getElementById('fw-sum').textContent === '`+fileSHA(t, v2)+`'`, 30*time.Second)
	tb.run(t, "confirm", chromedp.Click(chromedp.CSS(`#fw-confirm`)))
	tb.wait(t, "roll out enabled", `!document.getElementById('fw-rollout').disabled`, 30*time.Second)
	tb.run(t, "roll out", chromedp.Click(chromedp.CSS(`#fw-rollout`)))
	// The order shows once ews2 has taken the whole upload and checked its signature: a
	// deadline for a loaded machine, not a speed goal.
	tb.wait(t, "order shown", `document.getElementById('fw-rollout-status').textContent.includes('ews3 → ews1 → ews2')`, 60*time.Second)
	tb.wait(t, "the master done", `document.getElementById('fw-rollout-status').textContent.includes('ews1: version test-1 -> test-2')`, 90*time.Second)
	tb.wait(t, "this board on test-2", `document.querySelector('#board-facts dd[data-k="bVersion"]')?.textContent === 'test-2'`, 60*time.Second)
	testutil.EventuallyWithin(t, "every board on test-2", 30*time.Second, func() bool {
		for _, b := range boards {
			if i, err := b.info(); err != nil || i.Version != "test-2" || i.Runstate != "running" {
				return false
			}
		}
		return true
	})
	t.Logf("rollout status on the page:\n%s", evalIn[string](t, tb, `document.getElementById('fw-rollout-status').textContent`))
	if errs := tb.errs.All(); len(errs) > 0 {
		t.Fatalf("page errors: %q", errs)
	}
}
