package firstrun_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/node/firstrun"
)

// Every POST needs the claim code: without it, or with a wrong one, Start,
// Join and Finish answer 403 {"error"} and change nothing (issue 50: the
// first to reach :8080 owned the board, and anyone could press Finish).
func TestClaimCodeRequired(t *testing.T) {
	_, board := bundletest.Ews1(t)
	for _, c := range []struct {
		name, path string
		form       url.Values
	}{
		{"start without", "/firstrun/start", url.Values{"name": {"ews1"}}},
		{"start wrong", "/firstrun/start", url.Values{"name": {"ews1"}, "claim": {"0000-0000-0000-0000"}}},
		{"start too short", "/firstrun/start", url.Values{"name": {"ews1"}, "claim": {"0"}}},
		{"join without", "/firstrun/join", url.Values{"bundle": {bundletest.Text(t, board)}}},
		{"join wrong", "/firstrun/join", url.Values{"bundle": {bundletest.Text(t, board)}, "claim": {"ZZZZ-ZZZZ-ZZZZ-ZZZZ"}}},
		{"finish without", "/firstrun/finish", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, srv := newPage(t, firstrun.Options{Dir: dir})
			if c.form.Get("claim") == s.Claim() {
				t.Skip("drew the code guessed") // 1 in 2^80
			}
			code, body := post(t, srv, c.path, c.form)
			if code != http.StatusForbidden || !strings.Contains(jsonError(body), "claim code") {
				t.Fatalf("%d %s, want 403 naming the claim code", code, body)
			}
			noConfig(t, dir, c.name)
			if _, err := os.Stat(s.ClaimPath()); err != nil {
				t.Errorf("the claim file went: %v", err)
			}
		})
	}

	// Finish after a claimed Start still needs the code.
	s, srv := newPage(t, firstrun.Options{})
	if code, _ := post(t, srv, "/firstrun/start", url.Values{"name": {"ews1"}, "claim": {s.Claim()}}); code != http.StatusOK {
		t.Fatalf("start: %d", code)
	}
	if code, body := post(t, srv, "/firstrun/finish", url.Values{"claim": {"0000-0000-0000-0001"}}); code != http.StatusForbidden {
		t.Fatalf("finish with a wrong code: %d %s", code, body)
	}
	select {
	case p := <-s.Done():
		t.Fatalf("a wrong code started the board with %s", p)
	default:
	}
}

// The claim file: made at New with the printed code (mode 0600), the same
// code across restarts, a new one when the file holds none, gone once the
// board is claimed.
func TestClaimFile(t *testing.T) {
	claimDir := t.TempDir()
	s1, _ := newPage(t, firstrun.Options{ClaimDir: claimDir})
	path := filepath.Join(claimDir, firstrun.ClaimFile)
	if s1.ClaimPath() != path {
		t.Fatalf("claim path %s, want %s", s1.ClaimPath(), path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the claim file: %v %v", fi, err)
	}
	data, _ := os.ReadFile(path)
	if !regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$`).MatchString(s1.Claim()) || !strings.Contains(string(data), `claim = "`+s1.Claim()+`"`) {
		t.Fatalf("code %q, file:\n%s", s1.Claim(), data)
	}
	s2, srv := newPage(t, firstrun.Options{ClaimDir: claimDir})
	if s2.Claim() != s1.Claim() {
		t.Errorf("a restart drew a new code: %s, was %s", s2.Claim(), s1.Claim())
	}
	testutil.WriteFile(t, path, []byte("claim = \"not a code\"\n"), 0o600)
	if s3, _ := newPage(t, firstrun.Options{ClaimDir: claimDir}); s3.Claim() == s1.Claim() || !strings.Contains(testutil.ReadFile(t, path), s3.Claim()) {
		t.Errorf("a broken file: code %s, file %s", s3.Claim(), testutil.ReadFile(t, path))
	}
	// s2 still holds the first code; its Start claims the board.
	if code, _ := post(t, srv, "/firstrun/start", url.Values{"name": {"ews1"}, "claim": {s2.Claim()}}); code != http.StatusOK {
		t.Fatalf("start: %d", code)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the claim file after Start: %v", err)
	}
}

// Only the board's own names are served: a Host of another name is a DNS
// rebinding and gets 421, even with the right code; a foreign Origin 403.
func TestHostChecked(t *testing.T) {
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir, Hostname: "ews-test", Hosts: []string{"board.example.net"}})
	for _, c := range []struct {
		method, host, origin string
		want                 int
	}{
		{"GET", "evil.example", "", http.StatusMisdirectedRequest},
		{"GET", "evil.example:8080", "", http.StatusMisdirectedRequest},
		{"GET", "ews-test.evil.example", "", http.StatusMisdirectedRequest},
		{"POST", "evil.example", "", http.StatusMisdirectedRequest},
		{"POST", "127.0.0.1", "http://evil.example", http.StatusForbidden},
		{"GET", "127.0.0.1:8080", "", http.StatusOK},
		{"GET", "[::1]:8080", "", http.StatusOK},
		{"GET", "localhost", "", http.StatusOK},
		{"GET", "EWS-TEST.local.", "", http.StatusOK},
		{"GET", "ews-test", "", http.StatusOK},
		{"GET", "board.example.net:8080", "", http.StatusOK},
	} {
		var req *http.Request
		if c.method == "GET" {
			req, _ = http.NewRequest("GET", srv.URL+"/", nil)
		} else {
			req, _ = http.NewRequest("POST", srv.URL+"/firstrun/start", strings.NewReader(url.Values{"name": {"ews1"}, "claim": {s.Claim()}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if code, body, _ := do(t, srv.Client(), req); code != c.want {
			t.Errorf("%s Host %q Origin %q: %d, want %d: %.200s", c.method, c.host, c.origin, code, c.want, body)
		}
	}
	noConfig(t, dir, "a refused host")
}

// A POST from the page's own form passes the door however the browser
// names its origin ("null" under a no-referrer policy, with Sec-Fetch-Site
// same-origin); one from another site, or a null origin the browser does
// not vouch for, is refused before the claim code is looked at.
func TestSameSiteForm(t *testing.T) {
	dir := t.TempDir()
	_, srv := newPage(t, firstrun.Options{Dir: dir, Hostname: "ews-test"})
	for _, c := range []struct {
		origin, site string
		door         bool // refused at the door (a cross-site form)
	}{
		{"", "", false},
		{"http://127.0.0.1", "same-origin", false},
		{"null", "same-origin", false},
		{"null", "", true},
		{"null", "cross-site", true},
		{"http://127.0.0.1", "cross-site", true},
		{"http://127.0.0.1", "same-site", true},
		{"http://evil.example", "", true},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/firstrun/start", strings.NewReader(url.Values{"name": {"ews1"}, "claim": {"0000-0000-0000-0000"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		code, body, _ := do(t, srv.Client(), req)
		if door := strings.Contains(body, "cross-site"); door != c.door || code != http.StatusForbidden {
			t.Errorf("Origin %q Sec-Fetch-Site %q: %d %.120s, want refused at the door: %v (else the wrong claim code's 403)", c.origin, c.site, code, body, c.door)
		}
	}
	noConfig(t, dir, "forms")
}

// Wrong codes are held back: from one address, after the free tries each
// waits longer (429 with Retry-After, the right code included, and not
// compared); the wait passes on the clock.
func TestClaimGuessesLimited(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir, Now: clock.Now})
	wrong := url.Values{"name": {"ews1"}, "claim": {"0000-0000-0000-0000"}}
	for i := range 5 {
		if code, _ := post(t, srv, "/firstrun/start", wrong); code != http.StatusForbidden {
			t.Fatalf("try %d: %d, want 403", i+1, code)
		}
	}
	right := url.Values{"name": {"ews1"}, "claim": {s.Claim()}}
	req, _ := http.NewRequest("POST", srv.URL+"/firstrun/start", strings.NewReader(right.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, body, h := do(t, srv.Client(), req)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "1" || jsonError(body) == "" {
		t.Fatalf("a try after five wrong: %d Retry-After %q %s", code, h.Get("Retry-After"), body)
	}
	noConfig(t, dir, "a held try")
	clock.Add(time.Second)
	if code, _ := post(t, srv, "/firstrun/start", wrong); code != http.StatusForbidden {
		t.Fatalf("after the wait: %d", code)
	}
	if code, _ := post(t, srv, "/firstrun/start", right); code != http.StatusTooManyRequests {
		t.Fatalf("the next wait is longer: %d", code)
	}
	clock.Add(2 * time.Second)
	if code, body := post(t, srv, "/firstrun/start", right); code != http.StatusOK {
		t.Fatalf("the right code after the wait: %d %.300s", code, body)
	}
}

// With HTTPS up, plain HTTP only redirects: a GET gets 308 to the HTTPS
// port, a POST (even with the right code) 403 and nothing changes; over
// TLS the certificate is the one whose fingerprint the claim file shows,
// for the board's addresses, and the claim works.
func TestHTTPSOnlyWhenUp(t *testing.T) {
	dir, claimDir := t.TempDir(), t.TempDir()
	s, plain := newPage(t, firstrun.Options{Dir: dir, ClaimDir: claimDir, HTTPS: "127.0.0.1:8443"})
	if f := testutil.ReadFile(t, s.ClaimPath()); !strings.Contains(f, s.Fingerprint()) || !strings.Contains(f, "https://") {
		t.Errorf("the claim file does not give the fingerprint and the HTTPS address:\n%s", f)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", plain.URL+"/firstrun/admin/x?y=1", nil)
	if code, _, h := do(t, noRedirect, req); code != http.StatusPermanentRedirect || h.Get("Location") != "https://127.0.0.1:8443/firstrun/admin/x?y=1" {
		t.Errorf("plain GET: %d to %q", code, h.Get("Location"))
	}
	// the page itself: where the HTTPS page is and how to check its
	// certificate, no form and no fingerprint (nothing in clear is trusted)
	req, _ = http.NewRequest("GET", plain.URL+"/?x=1", nil)
	if code, body, _ := do(t, noRedirect, req); code != http.StatusOK || !strings.Contains(body, `href="https://127.0.0.1:8443/?x=1"`) ||
		!strings.Contains(body, firstrun.ClaimFile) || strings.Contains(body, "<form") || strings.Contains(body, s.Fingerprint()) {
		t.Errorf("plain GET /: %d\n%s", code, body)
	}
	if code, body := post(t, plain, "/firstrun/start", url.Values{"name": {"ews1"}, "claim": {s.Claim()}}); code != http.StatusForbidden || !strings.Contains(jsonError(body), "HTTPS") {
		t.Fatalf("plain POST with the code: %d %s", code, body)
	}
	noConfig(t, dir, "a plain POST")

	secure := httptest.NewUnstartedServer(s.Handler())
	secure.TLS = s.TLSConfig()
	secure.StartTLS()
	defer secure.Close()
	var seen *x509.Certificate
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // checked by fingerprint below, as the person does
		VerifyConnection: func(cs tls.ConnectionState) error {
			seen = cs.PeerCertificates[0]
			return nil
		},
	}}}
	req, _ = http.NewRequest("POST", secure.URL+"/firstrun/start", strings.NewReader(url.Values{"name": {"ews1"}, "claim": {s.Claim()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	get, _ := http.NewRequest("GET", secure.URL+"/", nil)
	if code, body, _ := do(t, client, get); code != http.StatusOK || !strings.Contains(body, `id="page-fingerprint">`+s.Fingerprint()) {
		t.Errorf("the page over TLS does not say its fingerprint: %d\n%s", code, body)
	}
	if code, body, _ := do(t, client, req); code != http.StatusOK {
		t.Fatalf("start over TLS: %d %.300s", code, body)
	}
	fp := firstrun.Fingerprint(seen.Raw)
	if fp != s.Fingerprint() || !strings.Contains(s.URL(), "https://") {
		t.Errorf("served %s, Fingerprint() %s, URL %s", fp, s.Fingerprint(), s.URL())
	}
	if err := seen.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("SANs: %v", err)
	}
	if err := seen.VerifyHostname("ews-test.local"); err != nil {
		t.Errorf("SANs: %v", err)
	}
	if k, ok := seen.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", seen.PublicKey)
	}
}
