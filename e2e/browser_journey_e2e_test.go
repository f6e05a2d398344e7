//go:build browser

package e2e

// The user's journey (issue 47) in a real browser, on three real boards, each `ews run` with no
// boot config in a network namespace of its own (its address, the default ports) and a mount
// namespace that gives it an empty /etc/ews, /var/lib/ews and /boot:
//
//	go test -tags browser -run TestBrowserJourney -v ./e2e/
//
// ews1's first-run page starts a new cluster (the admin bundle saved, the CA's fingerprint
// compared); ews2 joins with the bundle the page's command mints; ews3 joins with the enrolment
// code of the running cluster's "Add a board"; then a browser that trusts the cluster's CA (ca.pem
// imported with certutil into the NSS database of a fresh HOME; no flag that ignores certificate
// errors) sees the three boards running over HTTPS, logs in and toggles a device. The first-run
// pages' own certificates are self-signed: the person compares each one's fingerprint with the
// board's console and accepts it; the test does the same, then lets the browser accept exactly
// those keys (--ignore-certificate-errors-spki-list), in a browser of its own.

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/firstrun"
)

func TestBrowserJourney(t *testing.T) {
	needNetns(t, "the journey test")
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("the journey test needs unshare (util-linux)")
	}
	certutil := findCertutil(t)
	exe := findChromium(t)
	bin := ewsBinary(t)
	ips := journeyNet(t, 3)
	boards := make([]*freshBoard, len(ips))
	for i, ip := range ips {
		boards[i] = startFresh(t, bin, fmt.Sprintf("ews%d", i+1), ip)
	}
	// What the person does at each board: read the claim code and the page's fingerprint off the
	// console, open the page, compare the fingerprint, accept that certificate.
	var spkis []string
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+"'s first-run page", 60*time.Second, func() bool {
			m := regexp.MustCompile(`claim code ([0-9A-Z]{4}(?:-[0-9A-Z]{4}){3})`).FindStringSubmatch(b.log.String())
			f := regexp.MustCompile(`fingerprint ([0-9A-F:]{95})`).FindStringSubmatch(b.log.String())
			if m == nil || f == nil {
				return false
			}
			b.claim, b.fp = m[1], f[1]
			return true
		})
		var cert *x509.Certificate
		testutil.EventuallyWithin(t, b.name+"'s page over HTTPS", 30*time.Second, func() bool {
			c, err := tls.Dial("tcp", net.JoinHostPort(b.ip, "8443"), &tls.Config{InsecureSkipVerify: true}) // compared below, as a person would
			if err != nil {
				return false
			}
			defer c.Close()
			cert = c.ConnectionState().PeerCertificates[0]
			return true
		})
		if got := firstrun.Fingerprint(cert.Raw); got != b.fp {
			t.Fatalf("%s: the page's certificate %s, the console says %s", b.name, got, b.fp)
		}
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		spkis = append(spkis, base64.StdEncoding.EncodeToString(sum[:]))
	}
	pages := journeyBrowser(t, exe, nil, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(spkis, ",")))
	work := t.TempDir() // the person's computer: admin.bundle, ca.pem, the board bundle

	// ews1: a new cluster of three boards, named with their addresses.
	p1 := pages("first-run@ews1")
	p1.run(t, "open ews1's first-run page", chromedp.Navigate(boards[0].url()+"/"))
	p1.wait(t, "the forms", `!!document.querySelector('form[action="/firstrun/start"]')`, 20*time.Second)
	peers := make([]string, len(boards))
	for i, b := range boards {
		peers[i] = b.name + "=" + net.JoinHostPort(b.ip, "7946")
	}
	fill(t, p1, `form[action="/firstrun/start"]`, map[string]string{"claim": boards[0].claim, "name": "ews1", "boards": strings.Join(peers, ", ")})
	submit(t, p1, "start", "#start", "#next-commands")
	admin := evalIn[string](t, p1, `document.getElementById('admin-bundle-text').value`)
	token := evalIn[string](t, p1, `document.getElementById('token').textContent.trim()`)
	caHref := evalIn[string](t, p1, `document.getElementById('ca-download').href`)
	caFP := evalIn[string](t, p1, `document.getElementById('ca-fingerprint').textContent`)
	next := strings.Split(strings.TrimSpace(evalIn[string](t, p1, `document.getElementById('next-commands').textContent`)), "\n")
	nextPeers := evalIn[string](t, p1, `document.getElementById('next-peers').textContent`)
	caPEM, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(caHref, "data:application/x-pem-file;base64,"))
	if err != nil {
		t.Fatalf("ca.pem's link %.60q: %v", caHref, err)
	}
	blk, _ := pem.Decode(caPEM)
	if blk == nil || firstrun.Fingerprint(blk.Bytes) != caFP {
		t.Fatalf("the CA's fingerprint on the page %q is not ca.pem's", caFP)
	}
	writeFile(t, filepath.Join(work, "admin.bundle"), admin)
	writeFile(t, filepath.Join(work, "ca.pem"), string(caPEM))
	if len(next) != 2 || !strings.HasPrefix(next[0], "ews cluster board ews2 ") || nextPeers != strings.Join(peers, ", ") {
		t.Fatalf("the page's next steps: %q, peers %q", next, nextPeers)
	}
	submit(t, p1, "start the board", "#finish", "body")
	client := caClient(t, caPEM)
	waitFreshRunning(t, client, boards[:1], 1)

	// ews2: the bundle minted by the page's command, pasted on its page with the page's peers.
	if out, err := runShown(bin, work, next[0]); err != nil {
		t.Fatalf("%s: %v\n%s", next[0], err, out)
	}
	bundle2, err := os.ReadFile(filepath.Join(work, "ews2.board.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	p2 := pages("first-run@ews2")
	p2.run(t, "open ews2's first-run page", chromedp.Navigate(boards[1].url()+"/"))
	p2.wait(t, "the forms", `!!document.querySelector('form[action="/firstrun/join"]')`, 20*time.Second)
	// bad input first: the admin bundle pasted where the board's belongs is refused, nothing written
	fill(t, p2, `form[action="/firstrun/join"]:has(textarea[name=bundle])`, map[string]string{"claim": boards[1].claim, "bundle": admin, "peers": nextPeers})
	submit(t, p2, "join with the admin bundle", "#join", ".err")
	if msg := evalIn[string](t, p2, `document.querySelector('.err').textContent`); !strings.Contains(msg, "never goes on a board") {
		t.Fatalf("the admin bundle pasted on ews2's page: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(boards[1].etc, "ews.toml")); err == nil {
		t.Fatal("ews2 wrote a boot config from the admin bundle")
	}
	fill(t, p2, `form[action="/firstrun/join"]:has(textarea[name=bundle])`, map[string]string{"claim": boards[1].claim, "bundle": string(bundle2), "peers": nextPeers})
	submit(t, p2, "join", "#join", "#ca-fingerprint")
	if got := evalIn[string](t, p2, `document.getElementById('ca-fingerprint').textContent`); got != caFP {
		t.Fatalf("ews2's page shows the CA %s, ews1's %s", got, caFP)
	}
	submit(t, p2, "start the board", "#finish", "body")
	waitFreshRunning(t, client, boards[:2], 2)

	// A browser that trusts the cluster's CA: a fresh HOME whose NSS database holds ca.pem.
	home := t.TempDir()
	nssdb := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(nssdb, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + nssdb, "--empty-password"},
		{"-A", "-d", "sql:" + nssdb, "-n", "ews cluster CA", "-t", "C,,", "-i", filepath.Join(work, "ca.pem")},
	} {
		if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	trusted := journeyBrowser(t, exe, []string{"HOME=" + home})
	ui := trusted("ui@ews1")
	ui.run(t, "open ews1's UI", chromedp.Navigate(boards[0].url()+"/#cluster"))
	ui.wait(t, "the UI over HTTPS", `location.protocol === 'https:' && !!document.getElementById('boards')`, 20*time.Second)
	ui.run(t, "log in", chromedp.Click(chromedp.CSS(`#login-btn`)))
	ui.wait(t, "dialog", `document.getElementById('login-dlg').open`, 5*time.Second)
	ui.run(t, "token", chromedp.SendKeys(chromedp.CSS(`#login-token`), token), chromedp.Click(chromedp.CSS(`#login-submit`)))
	ui.wait(t, "the admin's Add a board", `!document.getElementById('addboard').hidden`, 15*time.Second)

	// ews3: "Add a board" shows the command; it prints the one-time code; ews3's page takes it.
	ui.run(t, "add ews3", chromedp.SendKeys(chromedp.CSS(`#ab-name`), "ews3"), chromedp.SendKeys(chromedp.CSS(`#ab-addrs`), boards[2].ip),
		chromedp.Click(chromedp.CSS(`#ab-show`)))
	ui.wait(t, "the command", `!document.getElementById('ab-out').hidden`, 5*time.Second)
	cmd := evalIn[string](t, ui, `document.getElementById('ab-command').textContent`)
	if want := "ews cluster enrol ews3 --addr " + boards[2].ip + " --url " + boards[0].url() + " --ttl 15m --bundle admin.bundle"; cmd != want {
		t.Fatalf("Add a board shows %q, want %q", cmd, want)
	}
	out, err := runShown(bin, work, cmd)
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	m := regexp.MustCompile(`enrolment code for ews3: ([0-9A-Z-]{19})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no code printed:\n%s", out)
	}
	ui.run(t, "refresh the enrolments", chromedp.Click(chromedp.CSS(`#ab-refresh`)))
	ui.wait(t, "ews3 waiting", `!!document.querySelector('#ab-list tr[data-enrol="ews3"]')`, 10*time.Second)

	// the link the command printed opens ews3's page with the code and URL filled in
	link := regexp.MustCompile(`(?m)^(https://\S+/\?code=\S+)$`).FindStringSubmatch(out)
	if link == nil || !strings.HasPrefix(link[1], boards[2].url()+"/") {
		t.Fatalf("no link to ews3's first-run page printed:\n%s", out)
	}
	p3 := pages("first-run@ews3")
	p3.run(t, "open the printed link", chromedp.Navigate(link[1]))
	p3.wait(t, "the form filled", fmt.Sprintf(`document.getElementById('enrol-code').value === %q && document.getElementById('enrol-url').value === %q`, m[1], boards[0].url()), 20*time.Second)
	// bad input first: a code nobody enrolled is refused with what it may be, and spends nothing
	fill(t, p3, `form:has(#enrol-code)`, map[string]string{"claim": boards[2].claim, "enrol_code": "0000-0000-0000-0000"})
	submit(t, p3, "join with a code nobody enrolled", "#enrol", ".err")
	if msg := evalIn[string](t, p3, `document.querySelector('.err').textContent`); !strings.Contains(msg, "used already") {
		t.Fatalf("a code nobody enrolled on ews3's page: %q", msg)
	}
	p3.run(t, "open the printed link again", chromedp.Navigate(link[1]))
	p3.wait(t, "the form filled again", fmt.Sprintf(`document.getElementById('enrol-code').value === %q`, m[1]), 20*time.Second)
	fill(t, p3, `form:has(#enrol-code)`, map[string]string{"claim": boards[2].claim})
	submit(t, p3, "join with the code", "#enrol", "#ca-fingerprint")
	submit(t, p3, "start the board", "#finish", "body")
	waitFreshRunning(t, client, boards, 3)
	ui.run(t, "refresh the enrolments", chromedp.Click(chromedp.CSS(`#ab-refresh`)))
	ui.wait(t, "none waiting", `!document.querySelector('#ab-list tr[data-enrol]')`, 10*time.Second)
	ui.wait(t, "three boards running", `document.querySelectorAll('#boards .row[data-board]').length === 3 && [...document.querySelectorAll('#boards .row[data-board]')].every(r => r.textContent.includes('running'))`, 30*time.Second)

	// A first device, from the Settings tab, toggled on the Devices tab of the third board.
	ui.run(t, "settings", chromedp.Navigate(boards[0].url()+"/#settings"))
	ui.wait(t, "the store", `!!document.getElementById('s-add') && document.getElementById('s-version').textContent !== ''`, 20*time.Second)
	ui.run(t, "add a lamp", chromedp.Click(chromedp.CSS(`#s-add`)), chromedp.SendKeys(chromedp.CSS(`#s-dev-name`), "lamp"),
		chromedp.SetValue(chromedp.CSS(`#s-dev-driver`), "sim-switch"))
	ui.run(t, "its fields", chromedp.Evaluate[chromedp.Void](`document.getElementById('s-dev-driver').dispatchEvent(new Event('change'))`))
	ui.run(t, "wired to ews2", chromedp.SetValue(chromedp.CSS(`#s-dev-fields [data-key="node"]`), "ews2"))
	ui.run(t, "save", chromedp.Click(chromedp.CSS(`#s-dev-save`)))
	ui.wait(t, "lamp in the store", `!!document.querySelector('#s-devices tr[data-device="lamp"]')`, 20*time.Second)
	ui3 := trusted("ui@ews3")
	ui3.run(t, "open ews3's UI", chromedp.Navigate(boards[2].url()+"/#devices"))
	ui3.run(t, "log in", chromedp.Click(chromedp.CSS(`#login-btn`)))
	ui3.wait(t, "dialog", `document.getElementById('login-dlg').open`, 5*time.Second)
	ui3.run(t, "token", chromedp.SendKeys(chromedp.CSS(`#login-token`), token), chromedp.Click(chromedp.CSS(`#login-submit`)))
	ui3.wait(t, "the lamp, controllable", cardJS("lamp")+` && !`+cardJS("lamp")+`.querySelector('input.sw').disabled`, 30*time.Second)
	ui3.run(t, "toggle the lamp", chromedp.Click(chromedp.JSPath(cardJS("lamp")+`.querySelector('input.sw')`)))
	ui3.wait(t, "the lamp on", relayOn("lamp"), 20*time.Second)
	resp, err := client.Get(boards[1].url() + "/api/devices/lamp")
	if err != nil {
		t.Fatal(err)
	}
	var dev struct{ State, Node string }
	_ = json.NewDecoder(resp.Body).Decode(&dev)
	resp.Body.Close()
	if dev.State != "on" || dev.Node != "ews2" {
		t.Fatalf("ews2 says the lamp is %q on %q, want on on ews2", dev.State, dev.Node)
	}
	for _, tb := range []*tab{p1, p2, p3, ui, ui3} {
		if errs := tb.errs.All(); len(errs) > 0 {
			t.Errorf("page %s: errors %q", tb.name, errs)
		}
	}
}

// journeyBrowser starts a headless chromium with env added and returns a tab maker.
func journeyBrowser(t *testing.T, exe string, env []string, extra ...chromedp.ExecAllocatorOption) func(string) *tab {
	t.Helper()
	if len(env) > 0 {
		extra = append(extra, chromedp.Env(env...))
	}
	return startBrowser(t, exe, 6*time.Minute, extra...)
}

// submit clicks a form's button and waits for the page it answers to show sel.
func submit(t *testing.T, tb *tab, what, button, sel string) {
	t.Helper()
	tb.run(t, what, chromedp.Click(chromedp.CSS(button)))
	// the page navigates: a poll inside the page ends with it, so each try is a new evaluation
	expr := fmt.Sprintf(`document.readyState === 'complete' && !!document.querySelector(%q)`, sel)
	testutil.EventuallyWithin(t, tb.name+": "+what+": the answer", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		return err == nil && ok
	})
}

// fill sets the named fields of the form matched by sel, as typed.
func fill(t *testing.T, tb *tab, sel string, fields map[string]string) {
	t.Helper()
	b, _ := json.Marshal(fields)
	tb.run(t, "fill "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
  const f = document.querySelector(%q);
  for (const [k, v] of Object.entries(%s)) { const el = f.querySelector('[name="' + k + '"]'); if (!el) throw new Error('no field ' + k); el.value = v; }
})()`, sel, b)))
}
