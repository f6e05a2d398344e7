// Package webui is the board's web UI, embedded in the binary.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
)

// Assets holds every file of the UI; nothing is fetched from the internet.
//
//go:embed static
var Assets embed.FS

// Handler serves the UI: "/" is the page, other paths its assets; anything
// else is a 404.
func Handler() http.Handler {
	sub, _ := fs.Sub(Assets, "static")
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method "+r.Method+" not allowed on "+r.URL.Path, http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path != "/" {
			if _, err := fs.Stat(sub, r.URL.Path[1:]); err != nil {
				http.Error(w, "no such page: "+r.URL.Path, http.StatusNotFound)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}
