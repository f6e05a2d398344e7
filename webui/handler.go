package webui

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
)

const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheRevalid   = "no-cache"
	// csp allows nothing from other origins: scripts, styles and connections only to the board.
	csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	assetPrefix = "/assets/"
)

// handler serves a site: the embedded one (site, loaded once) or one read from fsys on every
// request (dev).
type handler struct {
	site    *site
	fsys    fs.FS
	dev     bool
	loadErr error
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "webui: method %s not allowed", r.Method)
		return
	}
	s := h.site
	if h.dev {
		var err error
		if s, err = load(h.fsys); err != nil {
			jsonError(w, http.StatusInternalServerError, "%v", err)
			return
		}
	}
	if s == nil {
		jsonError(w, http.StatusInternalServerError, "webui: no assets: %v", h.loadErr)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		serve(w, r, s.index, cacheRevalid)
	case strings.HasPrefix(p, assetPrefix):
		version, name, ok := strings.Cut(p[len(assetPrefix):], "/")
		a := s.assets[name]
		if !ok || a == nil || strings.Contains(name, "/") {
			jsonError(w, http.StatusNotFound, "webui: no asset %q", p)
			return
		}
		cache := cacheImmutable
		if h.dev || version != s.version {
			// A page from an older or newer build asked: answer with what we have, but do not let it
			// stick under that version's name.
			cache = cacheRevalid
		}
		serve(w, r, a, cache)
	default:
		jsonError(w, http.StatusNotFound, "webui: no page %q", p)
	}
}

// serve writes a with conditional-request and gzip handling.
func serve(w http.ResponseWriter, r *http.Request, a *asset, cache string) {
	hd := w.Header()
	var gz []byte // nil: the plain body
	size, etag := a.size, a.etag
	if a.gz != nil {
		hd.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			gz, size, etag = a.gz, len(a.gz), strings.TrimSuffix(a.etag, `"`)+`-gz"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", cache)
	hd.Set("ETag", etag)
	hd.Set("X-Content-Type-Options", "nosniff")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, a.etag) {
		hd.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)
	switch {
	case r.Method == http.MethodHead:
	case gz != nil:
		_, _ = w.Write(gz)
	default:
		_ = a.writePlain(w) // the status is sent; a failure shows as a short body
	}
}

// etagMatch reports whether an If-None-Match list names etag, in either encoding (weak
// comparison, as RFC 9110 asks for If-None-Match).
func etagMatch(list, etag string) bool {
	base := strings.Trim(etag, `"`)
	for _, tag := range strings.Split(list, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" {
			return true
		}
		tag = strings.Trim(strings.TrimPrefix(tag, "W/"), `"`)
		if tag == base || tag == base+"-gz" {
			return true
		}
	}
	return false
}

// acceptsGzip parses Accept-Encoding: gzip (or x-gzip, or *) with a q-value above zero.
func acceptsGzip(ae string) bool {
	star := false
	for _, part := range strings.Split(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch coding {
		case "gzip", "x-gzip":
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// jsonError writes {"error": msg} with status, the shape of every error of
// ews (the node's httpx writes the same; webui stays free of node packages).
func jsonError(w http.ResponseWriter, status int, format string, args ...any) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{fmt.Sprintf(format, args...)})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
