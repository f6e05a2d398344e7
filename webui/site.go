package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"
	"sync"
)

// versionMark in index.html is replaced by the content version, so asset URLs change whenever any
// asset changes and can be cached for good.
const versionMark = "{{V}}"

// asset is one file ready to serve: its bytes, an optional gzip form, type and ETag.
type asset struct {
	name  string
	ctype string
	body  []byte // nil when only gz is kept (the embedded site): writePlain inflates it
	gz    []byte // nil when compression does not pay
	size  int    // bytes of the uncompressed body
	etag  string // strong ETag of the uncompressed body; the gzip form uses etag with a "-gz" suffix
	// inflated is the body inflated from gz the first time a client that does not take gzip asked
	// (docs/NOTES.md "Web UI": kept, not inflated per request)
	inflated struct {
		once sync.Once
		body []byte
		err  error
	}
}

// site is the set of assets with its content version.
type site struct {
	version string
	index   *asset
	assets  map[string]*asset // by file name, without index.html
}

// load reads every regular file at the top of fsys. It fails if index.html is missing.
func load(fsys fs.FS) (*site, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("webui: read assets: %w", err)
	}
	raw := map[string][]byte{}
	var names []string
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("webui: read %q: %w", e.Name(), err)
		}
		raw[e.Name()] = b
		names = append(names, e.Name())
	}
	if _, ok := raw["index.html"]; !ok {
		return nil, fmt.Errorf("webui: index.html missing")
	}
	sort.Strings(names)
	all := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(raw[n])
		fmt.Fprintf(all, "%s\x00%x\x00", n, sum)
	}
	s := &site{version: hex.EncodeToString(all.Sum(nil))[:12], assets: map[string]*asset{}}
	for _, n := range names {
		b := raw[n]
		if n == "index.html" {
			b = bytes.ReplaceAll(b, []byte(versionMark), []byte(s.version))
		}
		a, err := newAsset(n, b)
		if err != nil {
			return nil, err
		}
		if n == "index.html" {
			s.index = a
		} else {
			s.assets[n] = a
		}
	}
	return s, nil
}

func newAsset(name string, body []byte) (*asset, error) {
	sum := sha256.Sum256(body)
	a := &asset{name: name, ctype: contentType(name), body: body, size: len(body), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	if compressible(a.ctype) {
		gz, err := gzipBytes(body)
		if err != nil {
			return nil, fmt.Errorf("webui: gzip %q: %w", name, err)
		}
		if len(gz) < len(body)*9/10 {
			a.gz = gz
		}
	}
	return a, nil
}

// gzipBytes compresses b at the best level: done once at start, served many times.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var types = map[string]string{
	".html":  "text/html; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".svg":   "image/svg+xml",
	".json":  "application/json",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := types[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "image/svg") || strings.HasPrefix(ctype, "application/json")
}
