//go:build browser

package webui_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// At a phone's 390 px no tab scrolls sideways, and the tab bar shows
// every tab an admin has, "Settings" included (issue 47: every page was
// 428 px wide and the bar cut "Settings"). Measured, not looked at:
// scrollWidth against the viewport, each tab's right edge against the
// bar's.
func TestPhoneWidthBrowser(t *testing.T) {
	base := accBoard(t)
	ctx := accTab(t)
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	accLogin(t, ctx, base, accBundleToken)
	accWait(t, ctx, "the admin's tabs", `!document.getElementById('tab-settings').hidden && !document.getElementById('tab-users').hidden`)
	for _, tab := range []string{"devices", "cluster", "board", "users", "settings"} {
		t.Run(tab, func(t *testing.T) {
			if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#"+tab)); err != nil {
				t.Fatal(err)
			}
			accWait(t, ctx, "the view", fmt.Sprintf(`!document.getElementById('view-%s').hidden && document.getElementById('view-%s').getBoundingClientRect().height > 0`, tab, tab))
			if w := accEval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
				wide := accEval[string](t, ctx, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391).slice(0, 6).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`)
				t.Errorf("the page is %d px wide at 390 px; wider: %s", w, wide)
			}
			if cut := accEval[string](t, ctx, `(() => { const tabs = [...document.querySelectorAll('.tabs [role=tab]')].filter(e => !e.hidden);
				return tabs.filter(e => { const r = e.getBoundingClientRect(); return r.right > window.innerWidth + 0.5 || r.left < -0.5 || e.scrollWidth > e.clientWidth + 0.5; }).map(e => e.id).join(', '); })()`); cut != "" {
				t.Errorf("tabs cut at 390 px: %s", cut)
			}
		})
	}
}
