// Package openapi serves the OpenAPI 3.1 document of the boards' HTTP API (docs/openapi.yaml) as JSON.
package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the document
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/ews-firmware/ews/internal/httpx"
)

// The binary carries the document as gzipped JSON, made from
// docs/openapi.yaml by this package's test (so no YAML parser ships, and
// 54 KB of JSON cost 8 KB): after editing the YAML, regenerate it; the
// test fails while the two differ.
//
//go:generate go test -run TestJSONCopy . -args -update
//go:embed openapi.json.gz
var gz []byte

// JSON returns the document.
func JSON() ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return b, nil
}

// etag is the document's strong ETag, computed on first use.
var etag = sync.OnceValue(func() string {
	sum := sha256.Sum256(gz)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
})

// Handler answers GET /api/openapi.json (and HEAD) with the document as
// application/json: gzipped to a client that takes gzip, inflated as it
// is sent to one that does not; If-None-Match with its ETag gets 304.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etag())
		h.Set("Vary", "Accept-Encoding")
		if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, etag()) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/json")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", fmt.Sprint(len(gz)))
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				_, _ = w.Write(gz)
			}
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil { // the test made it: cannot happen
			httpx.Error(w, http.StatusInternalServerError, "openapi: the embedded document: %v", err)
			return
		}
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = io.Copy(w, zr)
		}
	})
}

// acceptsGzip reports whether r's Accept-Encoding takes gzip (q > 0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
