//go:build browser

package webui

// The history panel against the fake board plus the real history handler:
//
//	go test -tags browser -run TestBrowserHistory ./webui/

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/history"
)

// historyFixture is a store holding an hour of readings of the sensor "tank"
// and a few switchings of the output "relay1", served by the real handler.
func historyFixture(t *testing.T) *history.Handler {
	t.Helper()
	var mu sync.Mutex
	at := time.Now().Add(-50 * time.Minute)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	st, err := history.Open(history.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := range 10 {
		st.Record("tank", "°C", 18+float64(i%4)*0.5)
		st.Record("relay1", "", float64(i%2))
		mu.Lock()
		at = at.Add(5 * time.Minute)
		mu.Unlock()
	}
	devs := map[string]hal.Snapshot{
		"tank":   {Name: "tank", Node: "ews3", State: hal.StateOK, Value: 18.25, Unit: "°C"},
		"relay1": {Name: "relay1", Node: "ews2", State: hal.StateOff, Value: false},
	}
	return history.NewHandler(history.HandlerOptions{Store: st,
		Lookup: func(n string) (hal.Snapshot, bool) { d, ok := devs[n]; return d, ok }})
}

func TestBrowserHistory(t *testing.T) {
	fake := newFakeBoard(goodToken)
	mux := http.NewServeMux()
	historyFixture(t).Register(mux, nil)
	mux.HandleFunc("GET /api/board", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"ews2","runstate":"running","devices":[],"history":{"file":"/var/lib/ews/history/history.log","bytes":1048576,"points":42,"full":true,"error":"no space left on device"}}`))
	})
	mux.Handle("/", fake.routes(Handler()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer fake.dropStreams(false)
	ctx := browser(t)
	run(t, ctx, "open the UI", chromedp.Navigate(srv.URL+"/#devices"))
	waitJS(t, ctx, "tank card", card("tank")+` !== undefined`)

	t.Run("the chart opens and shows the readings", func(t *testing.T) {
		run(t, ctx, "dismiss toasts", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click())`))
		clickJS(t, ctx, "open tank", card("tank")+`.querySelector('.hist-btn')`)
		waitJS(t, ctx, "tank points", card("tank")+`.querySelector('.hist-chart').dataset.points === '10'`)
		if !evalJS[bool](t, ctx, card("tank")+`.classList.contains('open') && !`+card("tank")+`.querySelector('.hist').hidden`) {
			t.Fatal("the card did not open")
		}
		// the line is drawn: pixels of the accent colour on the canvas
		inked := evalJS[int](t, ctx, `(() => { const c = `+card("tank")+`.querySelector('.hist-chart');
			const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
			for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`)
		if inked < 500 {
			t.Fatalf("the chart drew %d pixels", inked)
		}
		note := evalJS[string](t, ctx, card("tank")+`.querySelector('.hist-note').textContent`)
		if !strings.Contains(note, "10 points") {
			t.Fatalf("note %q", note)
		}
	})

	t.Run("the CSV matches the API", func(t *testing.T) {
		for _, zoom := range []string{"1h", "24h"} {
			clickJS(t, ctx, "zoom "+zoom, card("tank")+fmt.Sprintf(`.querySelector('.zoom[data-zoom="%s"]')`, zoom))
			waitJS(t, ctx, "zoom pressed", card("tank")+fmt.Sprintf(`.querySelector('.zoom[data-zoom="%s"]').getAttribute('aria-pressed') === 'true'`, zoom))
			href := evalJS[string](t, ctx, card("tank")+`.querySelector('a.csv').href`)
			if !strings.Contains(href, "format=csv") {
				t.Fatalf("csv link %q", href)
			}
			var s history.Series
			getBody(t, strings.Replace(href, "format=csv", "format=json", 1), &s)
			waitJS(t, ctx, "points drawn", card("tank")+fmt.Sprintf(`.querySelector('.hist-chart').dataset.points === '%d'`, len(s.Points)))
			var text string
			getBody(t, href, &text)
			rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Points) == 0 || len(rows) != len(s.Points)+1 {
				t.Fatalf("%s: %d CSV rows for %d points", zoom, len(rows), len(s.Points))
			}
			for i, p := range s.Points {
				ts, _ := time.Parse(time.RFC3339Nano, rows[i+1][0])
				v, _ := strconv.ParseFloat(rows[i+1][1], 64)
				if !ts.Equal(p.T) || v != p.V {
					t.Fatalf("%s: CSV row %v, API point %+v", zoom, rows[i+1], p)
				}
			}
		}
	})

	t.Run("an output's state timeline", func(t *testing.T) {
		run(t, ctx, "dismiss toasts", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast .x').forEach(b => b.click())`))
		clickJS(t, ctx, "open relay1", card("relay1")+`.querySelector('.hist-btn')`)
		waitJS(t, ctx, "relay1 points", card("relay1")+`.querySelector('.hist-chart').dataset.points === '10'`)
	})

	t.Run("readable on a phone", func(t *testing.T) {
		if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "chart fits the phone", `(() => { const c = `+card("tank")+`.querySelector('.hist-chart'); const r = c.getBoundingClientRect();
			return r.width >= 300 && r.right <= window.innerWidth; })()`)
		if ov := evalJS[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`); ov {
			t.Fatal("the page scrolls sideways on a phone")
		}
		if dir := os.Getenv("EWS_SCREENSHOTS"); dir != "" {
			run(t, ctx, "show tank", chromedp.Evaluate[chromedp.Void](card("tank")+`.scrollIntoView({block: 'start'})`))
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, filepath.Join(dir, "history-phone.png"), png, 0o644)
		}
	})
	t.Run("the board page says the card is full", func(t *testing.T) {
		run(t, ctx, "board tab", chromedp.Evaluate[chromedp.Void](`location.hash = '#board'`))
		waitJS(t, ctx, "history fact", `(document.querySelector('#board-facts dd[data-k="history"]') || {}).textContent === 'Card full: history stopped growing'`)
	})
	if errs := pageLog.All(); len(errs) > 0 {
		t.Fatalf("page errors: %q", errs)
	}
}

// clickJS scrolls the element of a JS expression to the middle of the
// view, as a user would, and clicks it (the cards' content-visibility
// leaves a far card's box unknown until it is near the view).
func clickJS(t *testing.T, ctx context.Context, what, el string) {
	t.Helper()
	run(t, ctx, what+": scroll", chromedp.Evaluate[chromedp.Void](el+`.scrollIntoView({block: 'center'})`))
	run(t, ctx, what, chromedp.Click(chromedp.JSPath(el)))
}

// getBody fetches url; *string gets the text, anything else the JSON.
func getBody(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if s, ok := v.(*string); ok {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		*s = b.String()
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
