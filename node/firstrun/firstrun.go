// Package firstrun is the page a board without a boot config serves on its address: start a new cluster (its admin bundle made here, the token shown once) or join one (a board bundle pasted), then the boot config is written and the board starts.
package firstrun

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// Options configure New.
type Options struct {
	// Dir receives the boot config (ews.toml) and this board's bundle
	// (ews.bundle), mode 0600; default /etc/ews.
	Dir string
	// HTTP is the [node] http the boot config gets; default ":8080".
	HTTP   string
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the first-run page. Its secrets (the admin bundle, the token)
// are in memory only until the admin takes them or presses Start, and no
// page shows them again. Safe for concurrent use.
type Server struct {
	opts Options
	done chan string // the boot config's path, once

	mu      sync.Mutex
	written string // the boot config's path once written
	token   string // the new cluster's token, until Start
	admin   []byte // the admin bundle, until downloaded or Start
	fetch   string // the one-time name of its download
	closed  bool
}

// New returns the page; nothing is served until its Handler is.
func New(opts Options) *Server {
	if opts.Dir == "" {
		opts.Dir = "/etc/ews"
	}
	if opts.HTTP == "" {
		opts.HTTP = ":8080"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{opts: opts, done: make(chan string, 1)}
}

// Done yields the boot config's path when the admin pressed Start.
func (s *Server) Done() <-chan string { return s.done }

// Handler serves the page:
//
//	GET  /                       the two forms, or what was made
//	POST /firstrun/start         name: a new cluster of this board
//	POST /firstrun/join          bundle, peers, gossip: this board in an existing cluster
//	GET  /firstrun/admin/{fetch} the admin bundle, once
//	POST /firstrun/finish        forget the secrets, start the board
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("POST /firstrun/start", s.start)
	mux.HandleFunc("POST /firstrun/join", s.join)
	mux.HandleFunc("GET /firstrun/admin/{fetch}", s.download)
	mux.HandleFunc("POST /firstrun/finish", s.finish)
	return headers(mux)
}

// headers: no cache, no framing, no script but none is used.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if r.Method == http.MethodPost && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			http.Error(w, "firstrun: a cross-site form", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// view is what the page shows.
type view struct {
	Written, Token, Fetch, Error string
	Dir, Name                    string
}

func (s *Server) render(w http.ResponseWriter, status int, v view) {
	v.Dir = s.opts.Dir
	if v.Name == "" {
		v.Name = "ews1"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, pageHTML(v))
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	v := view{Written: s.written, Token: s.token, Fetch: s.fetch}
	s.mu.Unlock()
	v.Token = "" // shown once, in the answer to start
	s.render(w, http.StatusOK, v)
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// start makes a new cluster of this board: the admin bundle (kept in
// memory for one download), this board's bundle and boot config on disk.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.FormValue("name"))
	if !nameRe.MatchString(name) {
		s.render(w, http.StatusBadRequest, view{Name: name, Error: "firstrun: a board name is 1 to 31 of a-z, 0-9 and -, starting with a letter or digit"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != "" {
		s.render(w, http.StatusConflict, view{Written: s.written, Error: "firstrun: this board is set up already"})
		return
	}
	now := s.opts.Now()
	admin, err := bundle.NewAdmin(clustertls.Scope{Boards: []string{name}}, now)
	if err == nil {
		var board *bundle.Bundle
		if board, err = admin.Board(name, nil, now); err == nil {
			err = s.write(name, board, nil, "")
		}
	}
	if err != nil {
		s.render(w, http.StatusInternalServerError, view{Name: name, Error: err.Error()})
		return
	}
	s.token, s.admin, s.fetch = admin.Token, admin.Marshal(), randomHex(16)
	s.opts.Logger.Info("firstrun: a new cluster: the boot config and this board's bundle written; the admin bundle waits for its one download", "board", name, "config", s.written)
	s.render(w, http.StatusOK, view{Written: s.written, Token: s.token, Fetch: s.fetch, Name: name})
}

// join puts this board in an existing cluster from its board bundle
// (`ews cluster board NAME --bundle ADMIN --out FILE`, pasted) and the
// cluster's peers.
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	b, err := bundle.Parse("the pasted bundle", []byte(r.FormValue("bundle")))
	if err == nil {
		err = b.NeedBoard("the pasted bundle")
	}
	if err != nil {
		s.render(w, http.StatusBadRequest, view{Error: err.Error()})
		return
	}
	var peers []string
	for _, p := range strings.FieldsFunc(r.FormValue("peers"), func(c rune) bool { return c == ',' || c == '\n' || c == ' ' || c == '\r' }) {
		peers = append(peers, p)
	}
	self := false
	for _, p := range peers {
		n, addr, ok := strings.Cut(p, "=")
		if !ok || n == "" || addr == "" {
			s.render(w, http.StatusBadRequest, view{Error: fmt.Sprintf("firstrun: peer %q: want NAME=HOST:PORT (cluster.peers)", p)})
			return
		}
		self = self || n == b.Name
	}
	if len(peers) > 0 && !self {
		s.render(w, http.StatusBadRequest, view{Error: fmt.Sprintf("firstrun: the peers do not name this board (%s, from its bundle)", b.Name)})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != "" {
		s.render(w, http.StatusConflict, view{Written: s.written, Error: "firstrun: this board is set up already"})
		return
	}
	if err := s.write(b.Name, b, peers, r.FormValue("gossip")); err != nil {
		s.render(w, http.StatusInternalServerError, view{Error: err.Error()})
		return
	}
	s.opts.Logger.Info("firstrun: joining a cluster: the boot config and this board's bundle written", "board", b.Name, "peers", len(peers), "config", s.written)
	s.render(w, http.StatusOK, view{Written: s.written, Name: b.Name})
}

// write puts this board's bundle and its boot config in Dir; the caller
// holds mu.
func (s *Server) write(name string, b *bundle.Bundle, peers []string, gossip string) error {
	if err := os.MkdirAll(s.opts.Dir, 0o750); err != nil {
		return fmt.Errorf("firstrun: %w", err)
	}
	bpath := filepath.Join(s.opts.Dir, bundle.DefaultName)
	if err := bundle.Write(bpath, b, false); err != nil {
		return fmt.Errorf("firstrun: %w", err)
	}
	var c strings.Builder
	fmt.Fprintf(&c, "# written by the first-run page; `ews config init` shows every key\n[node]\nname = %s\nhttp = %s\n", strconv.Quote(name), strconv.Quote(s.opts.HTTP))
	if gossip = strings.TrimSpace(gossip); gossip != "" {
		fmt.Fprintf(&c, "gossip = %s\n", strconv.Quote(gossip))
	}
	fmt.Fprintf(&c, "\n[cluster]\nbundle_file = %s\n", strconv.Quote(bpath))
	if len(peers) > 0 {
		q := make([]string, len(peers))
		for i, p := range peers {
			q[i] = strconv.Quote(p)
		}
		fmt.Fprintf(&c, "peers = [%s]\n", strings.Join(q, ", "))
	}
	cpath := filepath.Join(s.opts.Dir, "ews.toml")
	if _, err := os.Stat(cpath); err == nil {
		return fmt.Errorf("firstrun: %s exists: this board has a config", cpath)
	}
	if err := bundle.WriteFile(cpath, []byte(c.String()), 0o600); err != nil {
		return fmt.Errorf("firstrun: %w", err)
	}
	s.written = cpath
	return nil
}

// download answers the admin bundle once; then it is gone from the board.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b := s.admin
	ok := b != nil && s.fetch != "" && r.PathValue("fetch") == s.fetch
	if ok {
		s.admin, s.fetch = nil, ""
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "firstrun: no such download (the admin bundle is given once)", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="admin.`+bundle.DefaultName+`"`)
	_, _ = w.Write(b)
}

// finish forgets the secrets and lets the board start.
func (s *Server) finish(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	path := s.written
	if path == "" {
		s.mu.Unlock()
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.token, s.admin, s.fetch = "", nil, ""
	first := !s.closed
	s.closed = true
	s.mu.Unlock()
	if first {
		s.done <- path
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><title>ews</title><p>The board starts now. Reload this page in a few seconds.</p>`)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// page writes the page for v, every value escaped (no html/template: it
// would link text/template, trimmed from the board binary for its size,
// docs/NOTES.md "Packaging and binary size").
func pageHTML(v view) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: first run</title>
<style>body{font:16px/1.45 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}
fieldset{border:1px solid #8886;border-radius:8px;margin:1rem 0;padding:1rem}
label{display:block;margin:.5rem 0}input,textarea{width:100%;box-sizing:border-box;font:inherit;padding:.3rem}
textarea{font-family:monospace;min-height:8rem}.err{color:#c33}code{word-break:break-all;background:#8882;padding:.1rem .3rem}</style>
</head><body>
<h1>ews: this board has no config</h1>
`)
	if v.Error != "" {
		b.WriteString(`<p class="err" role="alert">` + e(v.Error) + "</p>\n")
	}
	if v.Written != "" {
		b.WriteString(`<p>Written: <code>` + e(v.Written) + `</code> and this board's bundle in <code>` + e(v.Dir) + "</code>.</p>\n")
		if v.Token != "" {
			b.WriteString(`<p><strong>The cluster's token, shown once:</strong> <code id="token">` + e(v.Token) + "</code> — log in with it.</p>\n")
		}
		if v.Fetch != "" {
			b.WriteString(`<p><a id="admin-bundle" href="/firstrun/admin/` + e(v.Fetch) + `">Download the admin bundle</a> (once): it holds the CA key and the firmware signing key; keep it off the boards. Other boards join with a bundle minted from it: <code>ews cluster board NAME --bundle admin.ews.bundle --out NAME.bundle</code>.</p>` + "\n")
		}
		b.WriteString(`<form method="post" action="/firstrun/finish"><button id="finish" type="submit">Start the board</button></form>` + "\n")
	} else {
		b.WriteString(`<form method="post" action="/firstrun/start"><fieldset><legend>Start a new cluster</legend>
<label>This board's name <input name="name" value="` + e(v.Name) + `" required pattern="[a-z0-9][a-z0-9-]{0,30}"></label>
<p>Makes the cluster's secrets and CA here, shows the token once and lets you download the admin bundle once.</p>
<button id="start" type="submit">Start a new cluster</button></fieldset></form>
<form method="post" action="/firstrun/join"><fieldset><legend>Join a cluster</legend>
<label>This board's bundle (<code>ews cluster board NAME --bundle ADMIN --out FILE</code>, pasted) <textarea name="bundle" required></textarea></label>
<label>The cluster's peers, in rank order (<code>ews1=10.0.0.11:7946, ews2=10.0.0.12:7946</code>) <input name="peers"></label>
<label>This board's gossip address (default :7946) <input name="gossip"></label>
<button id="join" type="submit">Join</button></fieldset></form>
`)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}
