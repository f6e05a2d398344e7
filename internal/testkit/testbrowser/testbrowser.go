//go:build browser

// Package testbrowser finds (or installs) Debian's chromium and gives the headless launch flags the browser tests share.
package testbrowser

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Find returns the chromium to drive: $EWS_CHROMIUM, else one on PATH, else
// Debian's package installed with apt-get (as root). It skips the test
// with the reason when none can be had.
func Find(t testing.TB) string {
	t.Helper()
	look := func() string {
		if p := os.Getenv("EWS_CHROMIUM"); p != "" {
			return p
		}
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := look(); p != "" {
		return p
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skip("testbrowser: chromium not found (apt-get install -y chromium, or set EWS_CHROMIUM)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"update"}, {"install", "-y", "chromium"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			if len(out) > 2000 {
				out = out[len(out)-2000:]
			}
			t.Skipf("testbrowser: chromium not found and apt-get %s failed: %v\n%s", args[0], err, out)
		}
	}
	if p := look(); p != "" {
		return p
	}
	t.Skip("testbrowser: chromium still missing after apt-get install")
	return ""
}

// Options are the launch flags of every browser test: headless, no sandbox
// (tests run as root), none of chromium's own network traffic (this
// machine reaches only loopback), a fresh profile, English, 1280x860.
func Options(t testing.TB, exe string, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	return append(opts, extra...)
}

// Start starts headless chromium exe (Options, then extra) and returns a
// tab's context made with ctxOpts, given timeout; all of it ends with the
// test. The test is skipped when chromium does not start.
func Start(t testing.TB, exe string, timeout time.Duration, ctxOpts []chromedp.ContextOption, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), Options(t, exe, extra...)...)
	ctx, cancelC := chromedp.NewContext(actx, ctxOpts...)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("testbrowser: chromium %s does not start: %v", exe, err)
	}
	return ctx
}
