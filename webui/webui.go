// Package webui serves the ews dashboard: one page, its styles and scripts, embedded in the binary.
package webui

import (
	"embed"
	"log/slog"
	"net/http"
	"os"
	"sync"
)

// Dist holds every file of the dashboard (static/: the page, one stylesheet, a few JavaScript
// modules and an icon) as it is served: gzip-compressed at build time (dist/NAME.gz, or dist/NAME
// where gzip does not pay), index.html with its asset version filled in, and dist/VERSION. Nothing
// is fetched from the internet: boards often run on a LAN without an uplink, so the UI must be
// complete inside the binary. Compressing at build time keeps ~90 KB out of the binary and ~8 MB of
// compressor garbage out of every board's start (docs/NOTES.md, Packaging and binary size);
// after editing static/, run go generate ./webui (TestDistUpToDate fails until then).
//
//go:generate go test -run ^TestDistUpToDate$ -update .
//go:embed dist
var Dist embed.FS

// DirEnv names the environment variable that, when set to a directory, makes Handler serve the UI
// from that directory instead of Static, re-read on every request and never cached: edit
// webui/static and reload the browser while developing (EWS_WEBUI_DIR=webui/static ews run).
const DirEnv = "EWS_WEBUI_DIR"

var (
	embedOnce sync.Once
	embedded  *handler
)

// Handler returns the handler for the dashboard: GET/HEAD of "/" (and "/index.html") and of the
// assets under "/assets/<version>/"; every other path is 404. Mount it at "/" below the API routes.
// Assets carry a strong ETag, are sent gzip-compressed to clients that accept it, and are cached
// for a year under their content-versioned path; the page itself is revalidated on every load.
func Handler() http.Handler {
	if dir := os.Getenv(DirEnv); dir != "" {
		slog.Info("webui: serving from disk", "dir", dir)
		return &handler{fsys: os.DirFS(dir), dev: true}
	}
	embedOnce.Do(func() {
		s, err := loadDist(Dist, "dist")
		if err == nil {
			embedded = &handler{site: s}
		}
		if err != nil { // cannot happen with a well-formed build; serve errors rather than panic
			slog.Error("webui: load embedded assets", "err", err)
			embedded = &handler{loadErr: err}
		}
	})
	return embedded
}

// Version returns the content version of the embedded UI (the path segment under /assets/).
func Version() string {
	h, ok := Handler().(*handler)
	if !ok || h.site == nil {
		return ""
	}
	return h.site.version
}
