package firstrun

import (
	"encoding/base64"
	"fmt"
	"html"
	"net"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
)

// boardHTTPS is the port the board serves its UI on once started: [http]
// https's default, which the boot config written here keeps. Its plain
// port ([node] http) then redirects there.
const boardHTTPS = "8443"

// setUp is what Start or Join set up, public data only: what the page
// shows about where the board goes and how to trust it, until Finish.
type setUp struct {
	Name  string
	CAPEM []byte   // the cluster CA's certificate, PEM
	CAFP  string   // its SHA-256 fingerprint
	URLs  []string // where the board's UI will be, over HTTPS
}

// newSetUp reads the board bundle b: its CA and the names and addresses
// its certificate is good for (loopback and localhost left out).
func newSetUp(b *bundle.Bundle) (*setUp, error) {
	ca, err := b.CA()
	if err != nil || ca == nil {
		return nil, fmt.Errorf("firstrun: the bundle's CA: %v", err)
	}
	tc, err := b.BoardCert(b.Name, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("firstrun: the bundle's certificate: %w", err)
	}
	u := &setUp{Name: b.Name, CAPEM: ca.PEM, CAFP: Fingerprint(ca.Cert.Raw)}
	for _, d := range tc.Leaf.DNSNames {
		if d != "localhost" {
			u.URLs = append(u.URLs, "https://"+net.JoinHostPort(d, boardHTTPS)+"/")
		}
	}
	for _, ip := range tc.Leaf.IPAddresses {
		if !ip.IsLoopback() {
			u.URLs = append(u.URLs, "https://"+net.JoinHostPort(ip.String(), boardHTTPS)+"/")
		}
	}
	return u, nil
}

// uiURL is the address to open first: NAME.local when the certificate has
// it (the board announces it over mDNS), else its first name.
func (u *setUp) uiURL() string {
	want := "https://" + net.JoinHostPort(u.Name+".local", boardHTTPS) + "/"
	for _, l := range u.URLs {
		if l == want {
			return l
		}
	}
	if len(u.URLs) > 0 {
		return u.URLs[0]
	}
	return want
}

// pageTLS says how the person reached this page: over HTTPS with the
// board's self-signed certificate (and how to know it is this board's),
// or in clear.
func pageTLS(v view) string {
	e := html.EscapeString
	if !v.Secure {
		if v.FP != "" {
			return "" // a plain GET is redirected; only errors are shown in clear
		}
		return `<p class="err">This page is plain HTTP (this board could not open its HTTPS port): anyone on the LAN can read what you type here.</p>` + "\n"
	}
	return `<div class="box" id="page-tls"><p><strong>You are on this board's HTTPS port.</strong> Its certificate is self-signed, made by the board at this start (no one vouches for it), so the browser warned you. Accept it only if the SHA-256 fingerprint the browser shows (the padlock or "Not secure" → the certificate) is the <code>fingerprint</code> in <code>` + ClaimFile + `</code> on the boot partition, or on the board's console. This board says its certificate is:</p>
<p><code id="page-fingerprint">` + e(v.FP) + `</code></p>
<p><small>Once the board is set up, it serves its own UI on port ` + boardHTTPS + ` with a certificate from your cluster's CA instead, which your browser can trust for good (the page tells you how).</small></p></div>
`
}

// caSection offers the cluster CA's certificate (no secret in it) and its
// fingerprint, and says how to trust it per platform.
func caSection(u *setUp) string {
	e := html.EscapeString
	return `<div class="box" id="ca"><p><strong>The cluster's CA certificate</strong> (public: no key, no secret): <a id="ca-download" download="` + CAFile + `" href="data:application/x-pem-file;base64,` + base64.StdEncoding.EncodeToString(u.CAPEM) + `">save it as ` + CAFile + `</a>. SHA-256 fingerprint: <code id="ca-fingerprint">` + e(u.CAFP) + `</code></p>
<p>Every board of the cluster serves HTTPS with a certificate from this CA. Trust it once in each browser and device you use, then compare the fingerprint it shows with the one above. Its Name Constraints let it vouch for the cluster's boards only, never for another site.</p>
<ul>
<li><strong>Firefox</strong> (every system): Settings → Privacy &amp; Security → Certificates → View Certificates → Authorities → Import, pick ` + CAFile + `, tick "Trust this CA to identify websites".</li>
<li><strong>Chrome and Edge on Windows</strong>: Settings → Privacy and security → Security → Manage certificates → Import, into "Trusted Root Certification Authorities" (or double-click ` + CAFile + ` → Install Certificate → Current User → that store). Restart the browser.</li>
<li><strong>Chrome and Safari on macOS</strong>: double-click ` + CAFile + ` (Keychain Access, login keychain), open "ews cluster CA", Trust → "When using this certificate: Always Trust".</li>
<li><strong>Chrome on Linux</strong>: Settings → Privacy and security → Security → Manage certificates → Authorities → Import, tick "Trust this certificate for identifying websites".</li>
<li><strong>Android</strong>: Settings → Security → Encryption &amp; credentials → Install a certificate → CA certificate, pick ` + CAFile + `.</li>
<li><strong>iPhone and iPad</strong>: open ` + CAFile + ` in Safari and allow the profile; Settings → Profile Downloaded → Install; then Settings → General → About → Certificate Trust Settings → turn on "ews cluster CA".</li>
<li><strong>curl and the <code>ews</code> CLI</strong>: <code>--cacert ` + CAFile + `</code>.</li>
</ul>
<p><small>Not now? The browser then warns on every board: accept only a certificate issued by "ews cluster CA" whose CA fingerprint is the one above.</small></p></div>
`
}

// movesTo says where the board's UI is once started.
func movesTo(u *setUp) string {
	e := html.EscapeString
	l := u.uiURL()
	return `<span id="moves-to">Once started, the board serves its UI over HTTPS on port ` + boardHTTPS + `: <a href="` + e(l) + `">` + e(l) + `</a>` + also(u, l) + `, with a certificate from the cluster's CA (trust ` + CAFile + ` above, or the browser warns); its plain HTTP port only redirects there. Log in with the token.</span>`
}

// also lists the board's other addresses.
func also(u *setUp, first string) string {
	var s string
	for _, l := range u.URLs {
		if l != first {
			s += ", " + html.EscapeString(l)
		}
	}
	if s == "" {
		return ""
	}
	return " (also" + s[1:] + ")"
}

// finishHTML is the answer to Finish: the board starts and its UI moves to
// HTTPS with the cluster's certificate; the CA is offered again, since the
// next page the browser opens needs it.
func finishHTML(u *setUp) string {
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: starting</title>
<style>` + style + `</style>
</head><body>
<h1>The board starts now</h1>
<p>` + movesTo(u) + `</p>
<p>Open it in a few seconds. This page's own certificate goes with this page.</p>
` + caSection(u) + `</body></html>
`
}

// plainHTML is what the plain-HTTP port answers at / while the page is
// served over HTTPS: where to go and what the browser will say there. No
// form and no fingerprint: nothing here can be trusted, the claim file can.
func plainHTML(to string) string {
	e := html.EscapeString
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: first run</title>
<style>` + style + `</style>
</head><body>
<h1>ews: this board has no config</h1>
<p>Its first-run page is served over HTTPS only, so the claim code and the bundles never cross the LAN in clear: <a id="https" href="` + e(to) + `">` + e(to) + `</a></p>
<p>The browser will warn that the certificate is not trusted: the board made it itself at this start. Open the certificate from the warning (Advanced, or "View certificate") and accept it only if its SHA-256 fingerprint is the <code>fingerprint</code> in <code>` + ClaimFile + `</code> on the board's boot partition, or the one on its console.</p>
</body></html>
`
}
