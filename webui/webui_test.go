package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// pageBudget is the most the whole UI may weigh, gzip-compressed.
const pageBudget = 150 * 1024

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func staticFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(staticFS, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContentTypes(t *testing.T) {
	h := Handler()
	v := Version()
	if len(v) != 12 {
		t.Fatalf("version %q", v)
	}
	tests := []struct {
		path, ctype, file string
	}{
		{"/", "text/html; charset=utf-8", "index.html"},
		{"/index.html", "text/html; charset=utf-8", "index.html"},
		{"/assets/" + v + "/app.js", "text/javascript; charset=utf-8", "app.js"},
		{"/assets/" + v + "/devices.js", "text/javascript; charset=utf-8", "devices.js"},
		{"/assets/" + v + "/app.css", "text/css; charset=utf-8", "app.css"},
		{"/assets/" + v + "/icon.svg", "image/svg+xml", "icon.svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := get(t, h, "GET", tt.path, nil)
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != tt.ctype {
				t.Fatalf("content type %q, want %q", ct, tt.ctype)
			}
			if rec.Header().Get("Content-Encoding") != "" {
				t.Fatal("gzip sent to a client that did not ask for it")
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("no nosniff")
			}
			want := staticFile(t, tt.file)
			if tt.file == "index.html" {
				want = bytes.ReplaceAll(want, []byte(versionMark), []byte(v))
			}
			if !bytes.Equal(rec.Body.Bytes(), want) {
				t.Fatalf("body differs from static/%s", tt.file)
			}
		})
	}
}

func TestCacheControl(t *testing.T) {
	h := Handler()
	v := Version()
	tests := []struct{ path, want string }{
		{"/", "no-cache"},
		{"/assets/" + v + "/app.js", "public, max-age=31536000, immutable"},
		{"/assets/000000000000/app.js", "no-cache"}, // another build's version: served, not pinned
	}
	for _, tt := range tests {
		rec := get(t, h, "GET", tt.path, nil)
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != tt.want {
			t.Errorf("%s: status %d, Cache-Control %q, want %q", tt.path, rec.Code, rec.Header().Get("Cache-Control"), tt.want)
		}
	}
	idx := get(t, h, "GET", "/", nil)
	if csp := idx.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("index CSP %q", csp)
	}
	if !strings.Contains(idx.Body.String(), "/assets/"+v+"/app.js") {
		t.Error("index does not reference the versioned app.js")
	}
	if strings.Contains(idx.Body.String(), versionMark) {
		t.Error("version mark left in index")
	}
}

func TestGzip(t *testing.T) {
	h := Handler()
	v := Version()
	tests := []struct {
		ae   string
		gzip bool
	}{
		{"gzip", true},
		{"gzip, deflate, br", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"*", true},
		{"gzip;q=0", false},
		{"gzip;q=0, *", false},
		{"br", false},
		{"", false},
		{"identity", false},
	}
	plain := staticFile(t, "app.js")
	for _, tt := range tests {
		t.Run(tt.ae, func(t *testing.T) {
			rec := get(t, h, "GET", "/assets/"+v+"/app.js", map[string]string{"Accept-Encoding": tt.ae})
			if rec.Code != 200 {
				t.Fatalf("status %d", rec.Code)
			}
			if rec.Header().Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Vary %q", rec.Header().Get("Vary"))
			}
			got := rec.Header().Get("Content-Encoding") == "gzip"
			if got != tt.gzip {
				t.Fatalf("gzip %v, want %v", got, tt.gzip)
			}
			body := rec.Body.Bytes()
			if got {
				if len(body) >= len(plain) {
					t.Fatalf("gzip body %d bytes, plain %d", len(body), len(plain))
				}
				body = gunzip(t, body)
			}
			if !bytes.Equal(body, plain) {
				t.Fatal("body differs from app.js")
			}
			if cl := rec.Header().Get("Content-Length"); cl == "" || cl != strconv.Itoa(rec.Body.Len()) {
				t.Fatalf("Content-Length %q, body %d", cl, rec.Body.Len())
			}
		})
	}
}

func TestETag(t *testing.T) {
	h := Handler()
	v := Version()
	for _, path := range []string{"/", "/assets/" + v + "/app.css"} {
		for _, ae := range []string{"", "gzip"} {
			first := get(t, h, "GET", path, map[string]string{"Accept-Encoding": ae})
			etag := first.Header().Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]{16}(-gz)?"$`).MatchString(etag) {
				t.Fatalf("%s %q: ETag %q", path, ae, etag)
			}
			if (ae == "gzip") != strings.HasSuffix(etag, `-gz"`) {
				t.Fatalf("%s %q: ETag %q does not name the encoding", path, ae, etag)
			}
			for _, inm := range []string{etag, "W/" + etag, `"nope", ` + etag, "*"} {
				rec := get(t, h, "GET", path, map[string]string{"Accept-Encoding": ae, "If-None-Match": inm})
				if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
					t.Fatalf("%s If-None-Match %s: status %d, %d bytes", path, inm, rec.Code, rec.Body.Len())
				}
				if rec.Header().Get("ETag") != etag {
					t.Fatalf("304 ETag %q, want %q", rec.Header().Get("ETag"), etag)
				}
			}
			rec := get(t, h, "GET", path, map[string]string{"Accept-Encoding": ae, "If-None-Match": `"0123456789abcdef"`})
			if rec.Code != 200 {
				t.Fatalf("stale ETag: status %d", rec.Code)
			}
		}
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	h := Handler()
	v := Version()
	tests := []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope", 404},
		{"GET", "/assets/" + v + "/nope.js", 404},
		{"GET", "/assets/" + v + "/index.html", 404},
		{"GET", "/assets/app.js", 404},
		{"GET", "/assets/" + v + "/../app.js", 404},
		{"GET", "/assets/" + v + "/x/app.js", 404},
		{"GET", "/app.js", 404},
		{"POST", "/", 405},
		{"DELETE", "/assets/" + v + "/app.js", 405},
		{"HEAD", "/", 200},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := get(t, h, tt.method, tt.path, nil)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d", rec.Code, tt.status)
			}
			if tt.status >= 400 && rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("error content type %q", rec.Header().Get("Content-Type"))
			}
			if tt.method == "HEAD" && (rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "") {
				t.Fatalf("HEAD: %d body bytes, Content-Length %q", rec.Body.Len(), rec.Header().Get("Content-Length"))
			}
		})
	}
}

// TestPageWeight holds the whole UI, gzip-compressed, under the budget.
func TestPageWeight(t *testing.T) {
	entries, err := fs.ReadDir(staticFS, ".")
	if err != nil {
		t.Fatal(err)
	}
	total, raw := 0, 0
	for _, e := range entries {
		b := staticFile(t, e.Name())
		gz, err := gzipBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		raw += len(b)
		total += min(len(gz), len(b))
	}
	if len(entries) < 5 {
		t.Fatalf("only %d assets: the embed is incomplete", len(entries))
	}
	t.Logf("page weight: %d assets, %d bytes raw, %d bytes gzip (budget %d)", len(entries), raw, total, pageBudget)
	if total > pageBudget {
		t.Fatalf("page weighs %d bytes gzip, budget %d", total, pageBudget)
	}
}

// TestNoRemoteOrUnsafeCode keeps the UI self-contained (no CDN) and data out of HTML parsers.
func TestNoRemoteOrUnsafeCode(t *testing.T) {
	entries, err := fs.ReadDir(staticFS, ".")
	if err != nil {
		t.Fatal(err)
	}
	remote := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)
	unsafe := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(`)
	for _, e := range entries {
		b := string(staticFile(t, e.Name()))
		b = strings.ReplaceAll(b, "http://www.w3.org/2000/svg", "") // an XML namespace, never fetched
		if m := remote.FindString(b); m != "" {
			t.Errorf("%s refers to a remote address %q", e.Name(), m)
		}
		if strings.HasSuffix(e.Name(), ".js") {
			if m := unsafe.FindString(b); m != "" {
				t.Errorf("%s uses %s: build DOM with textContent", e.Name(), m)
			}
		}
	}
}

// TestIndexReferencesExist: every /assets/ path in the page names an embedded file.
func TestIndexReferencesExist(t *testing.T) {
	h := Handler()
	idx := get(t, h, "GET", "/", nil).Body.String()
	refs := regexp.MustCompile(`/assets/[0-9a-f]{12}/[A-Za-z0-9._-]+`).FindAllString(idx, -1)
	if len(refs) < 3 {
		t.Fatalf("index has %d asset references", len(refs))
	}
	for _, ref := range refs {
		if rec := get(t, h, "GET", ref, nil); rec.Code != 200 {
			t.Errorf("%s: status %d", ref, rec.Code)
		}
	}
	// JS modules import siblings by relative path; each must exist.
	imp := regexp.MustCompile(`from '\./([a-z0-9_-]+\.js)'`)
	for _, e := range []string{"app.js", "devices.js", "cluster.js", "charts.js", "api.js", "i18n.js", "dom.js", "users.js", "addboard.js"} {
		for _, m := range imp.FindAllStringSubmatch(string(staticFile(t, e)), -1) {
			if _, err := fs.Stat(staticFS, m[1]); err != nil {
				t.Errorf("%s imports missing %s", e, m[1])
			}
		}
	}
}

// TestDevDir serves from disk when DirEnv is set, re-reading on each request and never pinning.
func TestDevDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		testutil.WriteFile(t, filepath.Join(dir, name), []byte(body), 0o644)
	}
	write("index.html", `<script src="/assets/{{V}}/app.js"></script>`)
	write("app.js", "one")
	t.Setenv(DirEnv, dir)
	h := Handler()
	idx := get(t, h, "GET", "/", nil)
	m := regexp.MustCompile(`/assets/[0-9a-f]{12}/app\.js`).FindString(idx.Body.String())
	if idx.Code != 200 || m == "" {
		t.Fatalf("dev index: %d %q", idx.Code, idx.Body)
	}
	rec := get(t, h, "GET", m, nil)
	if rec.Body.String() != "one" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("dev asset %q, Cache-Control %q", rec.Body, rec.Header().Get("Cache-Control"))
	}
	write("app.js", "two")
	if rec := get(t, h, "GET", m, nil); rec.Body.String() != "two" {
		t.Fatalf("dev asset not re-read: %q", rec.Body)
	}
	if err := os.Remove(filepath.Join(dir, "index.html")); err != nil {
		t.Fatal(err)
	}
	if rec := get(t, h, "GET", "/", nil); rec.Code != 500 {
		t.Fatalf("missing index: status %d", rec.Code)
	}
}

func TestAcceptsGzipOddInput(t *testing.T) {
	for _, ae := range []string{";;;", "gzip;q=", "gzip;q=abc", ",,,", "GZIP", "x-gzip;q=0.5"} {
		_ = acceptsGzip(ae) // must not panic
	}
	if !acceptsGzip("GZIP") || !acceptsGzip("x-gzip;q=0.5") {
		t.Fatal("case or x-gzip not honoured")
	}
}

// TestTranslations: every key the page and the scripts use exists in English, and Chinese has every
// English key.
func TestTranslations(t *testing.T) {
	src := string(staticFile(t, "i18n.js"))
	block := func(lang string) map[string]bool {
		i := strings.Index(src, "\n  "+lang+": {")
		if i < 0 {
			t.Fatalf("no %s dictionary", lang)
		}
		j := strings.Index(src[i:], "\n  },")
		keys := map[string]bool{}
		for _, m := range regexp.MustCompile(`(\w+): '`).FindAllStringSubmatch(src[i:i+j], -1) {
			keys[m[1]] = true
		}
		return keys
	}
	en, zh := block("en"), block("zh")
	if len(en) < 50 {
		t.Fatalf("only %d English keys parsed", len(en))
	}
	for k := range en {
		if !zh[k] {
			t.Errorf("Chinese lacks %q", k)
		}
	}
	for k := range zh {
		if !en[k] {
			t.Errorf("English lacks %q", k)
		}
	}
	uses := regexp.MustCompile(`\bt\('(\w+)'[,)]|data-i18n(?:-ph)?="(\w+)"|dataset: \{ i18n: '(\w+)'`)
	entries, _ := fs.ReadDir(staticFS, ".")
	for _, e := range entries {
		for _, m := range uses.FindAllStringSubmatch(string(staticFile(t, e.Name())), -1) {
			k := m[1] + m[2] + m[3]
			if !en[k] {
				t.Errorf("%s uses unknown key %q", e.Name(), k)
			}
		}
	}
}
