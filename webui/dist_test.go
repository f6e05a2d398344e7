package webui

import (
	"bytes"
	"flag"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

var update = flag.Bool("update", false, "rewrite webui/dist from webui/static (go generate ./webui)")

// staticFS is the UI's source, the directory dist/ is made from.
var staticFS = os.DirFS("static")

// distFiles is what dist/ must hold for the site s loaded from static/: each asset gzip-compressed
// (NAME.gz) or, where gzip does not pay, as it is; index.html with its version filled in; VERSION.
func distFiles(s *site) map[string][]byte {
	out := map[string][]byte{versionFile: []byte(s.version + "\n")}
	for _, a := range append([]*asset{s.index}, mapValues(s.assets)...) {
		if a.gz != nil {
			out[a.name+".gz"] = a.gz
		} else {
			out[a.name] = a.body
		}
	}
	return out
}

func mapValues(m map[string]*asset) []*asset {
	var out []*asset
	for _, a := range m {
		out = append(out, a)
	}
	return out
}

// TestDistUpToDate fails when dist/ (what the binary embeds) is not static/ compressed: run
// go generate ./webui (this test with -update) after editing static/. Compressed files are compared
// inflated, so another Go version's compressor does not fail it.
func TestDistUpToDate(t *testing.T) {
	s, err := load(staticFS)
	if err != nil {
		t.Fatal(err)
	}
	want := distFiles(s)
	if *update {
		if err := os.RemoveAll("dist"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir("dist", 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			testutil.WriteFile(t, filepath.Join("dist", name), b, 0o644)
		}
		return
	}
	entries, err := fs.ReadDir(Dist, "dist")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
		w, ok := want[e.Name()]
		if !ok {
			t.Errorf("dist/%s has no source in static/ (or gzip no longer pays): run go generate ./webui", e.Name())
			continue
		}
		got, err := fs.ReadFile(Dist, "dist/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(e.Name()) == ".gz" {
			got, w = gunzip(t, got), gunzip(t, w)
		}
		if !bytes.Equal(got, w) {
			t.Errorf("dist/%s differs from static/: run go generate ./webui", e.Name())
		}
	}
	for name := range want {
		if !slices.Contains(have, name) {
			t.Errorf("dist/%s is missing: run go generate ./webui", name)
		}
	}
}

// The embedded site serves what the site loaded from static/ serves: same version, ETags, types
// and bodies, plain and compressed.
func TestDistServesStatic(t *testing.T) {
	src, err := load(staticFS)
	if err != nil {
		t.Fatal(err)
	}
	dist, err := loadDist(Dist, "dist")
	if err != nil {
		t.Fatal(err)
	}
	if dist.version != src.version {
		t.Fatalf("dist version %s, static %s", dist.version, src.version)
	}
	if len(dist.assets) != len(src.assets) {
		t.Fatalf("dist has %d assets, static %d", len(dist.assets), len(src.assets))
	}
	for _, a := range append([]*asset{src.index}, mapValues(src.assets)...) {
		d := dist.index
		if a.name != "index.html" {
			d = dist.assets[a.name]
		}
		if d == nil {
			t.Fatalf("dist lacks %s", a.name)
		}
		var plain bytes.Buffer
		if err := d.writePlain(&plain); err != nil {
			t.Fatal(err)
		}
		if d.etag != a.etag || d.ctype != a.ctype || d.size != len(a.body) || !bytes.Equal(plain.Bytes(), a.body) || (d.gz == nil) != (a.gz == nil) {
			t.Errorf("%s: dist etag %s type %s size %d gz %v, static %s %s %d %v", a.name, d.etag, d.ctype, d.size, d.gz != nil, a.etag, a.ctype, len(a.body), a.gz != nil)
		}
	}
}

func TestLoadDistErrors(t *testing.T) {
	for name, fsys := range map[string]fs.FS{
		"no version": os.DirFS(t.TempDir()),
		"bad gzip":   writeDir(t, map[string]string{versionFile: "abc\n", "index.html.gz": "not gzip"}),
		"no index":   writeDir(t, map[string]string{versionFile: "abc\n", "app.js": "x"}),
	} {
		if _, err := loadDist(fsys, "."); err == nil {
			t.Errorf("%s: loadDist accepted it", name)
		}
	}
}

func writeDir(t *testing.T, files map[string]string) fs.FS {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		testutil.WriteFile(t, filepath.Join(dir, n), []byte(b), 0o644)
	}
	return os.DirFS(dir)
}

// TestDistPlainConcurrent: clients that do not take gzip, many at once, each get the whole body;
// the body is inflated once and kept (run with -race).
func TestDistPlainConcurrent(t *testing.T) {
	dist, err := loadDist(Dist, "dist")
	if err != nil {
		t.Fatal(err)
	}
	a := dist.assets["app.js"]
	if a == nil || a.body != nil || a.gz == nil {
		t.Fatalf("app.js should be kept only gzipped: %+v", a)
	}
	const clients = 8
	got := make([][]byte, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			var b bytes.Buffer
			if err := a.writePlain(&b); err != nil {
				t.Error(err)
			}
			got[i] = b.Bytes()
		})
	}
	wg.Wait()
	for i, b := range got {
		if len(b) != a.size {
			t.Errorf("client %d got %d bytes, want %d", i, len(b), a.size)
		}
	}
	if len(a.inflated.body) != a.size {
		t.Errorf("kept inflated body is %d bytes, want %d", len(a.inflated.body), a.size)
	}
}

// BenchmarkServePlain: GET / from a client that does not take gzip (wrk, curl).
func BenchmarkServePlain(b *testing.B) {
	h := Handler()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
