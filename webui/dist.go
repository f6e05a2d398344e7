package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// versionFile in dist/ holds the content version that load computed from static/.
const versionFile = "VERSION"

// loadDist reads a site compressed at build time (see Dist) from dir of fsys: NAME.gz files are kept
// only compressed, and sent uncompressed by inflating them per request; other files are kept as they
// are. ETags are those load gives the same files, so a board and a developer's disk agree.
func loadDist(fsys fs.FS, dir string) (*site, error) {
	v, err := fs.ReadFile(fsys, path.Join(dir, versionFile))
	if err != nil {
		return nil, fmt.Errorf("webui: read version: %w", err)
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("webui: read assets: %w", err)
	}
	s := &site{version: strings.TrimSpace(string(v)), assets: map[string]*asset{}}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == versionFile {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("webui: read %q: %w", e.Name(), err)
		}
		var a *asset
		if name, ok := strings.CutSuffix(e.Name(), ".gz"); ok {
			a, err = gzAsset(name, b)
		} else {
			a = plainAsset(e.Name(), b)
		}
		if err != nil {
			return nil, err
		}
		if a.name == "index.html" {
			s.index = a
		} else {
			s.assets[a.name] = a
		}
	}
	if s.index == nil {
		return nil, fmt.Errorf("webui: index.html missing")
	}
	return s, nil
}

// plainAsset is body served as is.
func plainAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	return &asset{name: name, ctype: contentType(name), body: body, size: len(body), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
}

// gzAsset is an asset kept only in its gzip form; its ETag and size are those of the inflated body,
// which is read once here and not kept.
func gzAsset(name string, gz []byte) (*asset, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("webui: gunzip %q: %w", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, zr)
	if err != nil {
		return nil, fmt.Errorf("webui: gunzip %q: %w", name, err)
	}
	return &asset{name: name, ctype: contentType(name), gz: gz, size: int(n), etag: `"` + hex.EncodeToString(h.Sum(nil)[:8]) + `"`}, nil
}

// writePlain writes a's uncompressed body: body if kept, else its gzip form inflated once, at the
// first client that does not take gzip, and kept from then on (at most the site's plain size,
// ~0.2 MB, and only on a board such a client reached); inflating at every request cost the
// board ~3x its requests/s for such clients (wrk, curl, scripts).
func (a *asset) writePlain(w io.Writer) error {
	if a.body != nil {
		_, err := w.Write(a.body)
		return err
	}
	a.inflated.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(a.gz))
		if err != nil {
			a.inflated.err = err
			return
		}
		a.inflated.body, a.inflated.err = io.ReadAll(zr)
	})
	if a.inflated.err != nil {
		return a.inflated.err
	}
	_, err := w.Write(a.inflated.body)
	return err
}
