//go:build browser

package webui_test

// The Settings page's browser test against a real board (node.New on
// loopback):
//
//	go test -tags browser -run TestSettingsBrowser ./webui/

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// A viewer does not see the Settings tab; the admin adds a device there,
// sees it on the Devices tab, rolls the version back and sees it gone.
func TestSettingsBrowser(t *testing.T) {
	base := accBoard(t)
	_, vw := accAPI(t, base, accBundleToken, "POST", "/api/users", `{"name":"v1","role":"viewer"}`)

	ctx := accTab(t)

	accLogin(t, ctx, base, vw["token"].(string))
	accWait(t, ctx, "the viewer's page", `document.getElementById('who').textContent.includes('v1')`)
	if accEval[bool](t, ctx, `!document.getElementById('tab-settings').hidden`) {
		t.Error("a viewer sees the Settings tab")
	}

	accLogin(t, ctx, base, accBundleToken)
	accWait(t, ctx, "the admin sees the Settings tab", `!document.getElementById('tab-settings').hidden`)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#settings")); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the devices of the store", `!!document.querySelector('#s-devices tr[data-device="relay1"]') && document.getElementById('s-version').textContent.includes('1')`)
	// sections the store does not hold (here MQTT and rules; the seed wrote [sched] and
	// [history]) show what is in effect, greyed (issue 47)
	accWait(t, ctx, "the defaults in effect", `document.getElementById('s-text-mqtt').value === '' && document.getElementById('s-text-mqtt').placeholder.includes('broker') &&
		!!document.querySelector('.s-section[data-section="mqtt"] .s-in-effect') && !!document.querySelector('.s-section[data-section="rule"] .s-in-effect') &&
		!document.querySelector('.s-section[data-section="sched"] .s-in-effect')`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#s-add`)),
		chromedp.SendKeys(chromedp.CSS(`#s-dev-name`), "fan"),
	); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the driver's fields with their help", `[...document.querySelectorAll('#s-dev-fields [data-field]')].some(l => l.dataset.field === 'on_stop' && l.querySelector('.help').textContent.includes('closes'))`)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#s-dev-fields [data-field="on_stop"] select`), "off"),
		chromedp.Click(chromedp.CSS(`#s-dev-save`)),
	); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "fan in the store's version 2", `!!document.querySelector('#s-devices tr[data-device="fan"]') && document.getElementById('s-version').textContent.includes('2')`)

	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#devices")); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "fan on the Devices tab", `[...document.querySelectorAll('#device-list .card')].some(c => c.dataset.name === 'fan')`)

	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#settings")); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "the history with a diff naming fan", `!!document.querySelector('#s-history tr[data-version="1"] .s-rollback') && [...document.querySelectorAll('#s-history pre.diff .add')].some(s => s.textContent.includes('fan'))`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.confirm = () => true; true`)); err != nil {
		t.Fatal(err)
	}
	// clicked in the page in one step: the history table may be drawn again
	// between finding the button and a CDP click on it (a node id gone)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#s-history tr[data-version="1"] .s-rollback').click(); true`)); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "version 3 without fan", `document.getElementById('s-version').textContent.includes('3') && !document.querySelector('#s-devices tr[data-device="fan"]')`)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/#devices")); err != nil {
		t.Fatal(err)
	}
	accWait(t, ctx, "fan gone from the Devices tab", `document.querySelectorAll('#device-list .card').length === 3 && ![...document.querySelectorAll('#device-list .card')].some(c => c.dataset.name === 'fan')`)
}
