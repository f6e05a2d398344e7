// Package firstrun is the page a board without a boot config serves: whoever shows the board's claim code starts a new cluster (its admin bundle handed over in that answer only) or joins one (a board bundle pasted), then the boot config is written and the board starts.
package firstrun

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/httpx"
)

// Options configure New.
type Options struct {
	// Dir receives the boot config (ews.toml) and this board's bundle
	// (cluster.bundle), mode 0600; default /etc/ews.
	Dir string
	// ClaimDir receives ews-claim.txt, the claim code: the boot partition,
	// which the person setting the board up can read off the card; default Dir.
	ClaimDir string
	// HTTP is the [node] http the boot config gets; default ":8080".
	HTTP string
	// HTTPS is the address the page is also served on over TLS, with the
	// certificate of TLSConfig (cmd/ews: ":8443"). Set, a plain-HTTP GET is
	// redirected there and no POST is taken in clear; "" serves plain HTTP
	// only (the claim code then crosses the LAN in clear).
	HTTPS string
	// Hostname is the board's, default os.Hostname(); the page answers to
	// it, NAME.local, localhost, IP literals and Hosts, nothing else.
	Hostname string
	Hosts    []string
	Now      func() time.Time
	Logger   *slog.Logger
	// Fetch fetches an enrolment from a running board (enrol.go); default
	// a GET of its URL.
	Fetch Fetcher
}

// Server is the first-run page. The claim code gates every POST; the admin
// bundle and the token exist only in the answer to Start. Safe for
// concurrent use.
type Server struct {
	opts    Options
	done    chan string // the boot config's path, once
	claim   string      // the claim code, normalised
	claimAt string      // its file
	cert    *tls.Certificate
	fp      string // cert's fingerprint
	hosts   hosts
	tries   *guesses

	mu      sync.Mutex
	written string // the boot config's path once written
	set     *setUp // what was set up (public data), once written
	closed  bool
}

// New returns the page with its claim code (the one in ClaimDir's
// ews-claim.txt if there is one, else a new one written there) and, with
// HTTPS set, its certificate; nothing is served until its Handler is.
func New(opts Options) (*Server, error) {
	if opts.Dir == "" {
		opts.Dir = "/etc/ews"
	}
	if opts.ClaimDir == "" {
		opts.ClaimDir = opts.Dir
	}
	if opts.HTTP == "" {
		opts.HTTP = ":8080"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Fetch == nil {
		opts.Fetch = fetchEnrolment
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Hostname == "" {
		opts.Hostname, _ = os.Hostname()
	}
	s := &Server{
		opts:    opts,
		done:    make(chan string, 1),
		claimAt: filepath.Join(opts.ClaimDir, ClaimFile),
		hosts:   newHosts(opts.Hostname, opts.Hosts),
		tries:   newGuesses(opts.Now),
	}
	if opts.HTTPS != "" {
		var names []string
		for n := range s.hosts {
			names = append(names, n)
		}
		cert, fp, err := selfSigned(names, boardIPs(), opts.Now())
		if err != nil {
			return nil, err
		}
		s.cert, s.fp = &cert, fp
	}
	code, err := readClaim(s.claimAt)
	if err != nil {
		return nil, err
	}
	if code == "" {
		if code, err = newClaim(); err != nil {
			return nil, err
		}
	}
	s.claim = code
	if err := os.MkdirAll(opts.ClaimDir, 0o750); err != nil {
		opts.Logger.Warn("firstrun: the claim code is on the console only", "err", err)
	} else if err := writeClaim(s.claimAt, claimText(code, s.fp, s.URL())); err != nil {
		opts.Logger.Warn("firstrun: the claim code is on the console only", "err", err)
	}
	opts.Logger.Warn("firstrun: this board is claimed with its claim code", "claim", showClaim(code), "file", s.claimAt, "url", s.URL(), "fingerprint", s.fp)
	return s, nil
}

// Claim is the claim code as printed (four groups of four).
func (s *Server) Claim() string { return showClaim(s.claim) }

// ClaimPath is the claim file's path (it may not exist: unwritable, or claimed).
func (s *Server) ClaimPath() string { return s.claimAt }

// Fingerprint is the SHA-256 of the page's certificate; "" without HTTPS.
func (s *Server) Fingerprint() string { return s.fp }

// TLSConfig is what the HTTPS listener serves with; nil without HTTPS.
func (s *Server) TLSConfig() *tls.Config {
	if s.cert == nil {
		return nil
	}
	return &tls.Config{Certificates: []tls.Certificate{*s.cert}, MinVersion: tls.VersionTLS12}
}

// URL is where a person opens the page: over HTTPS when it is served,
// at the board's first address (its hostname.local without one).
func (s *Server) URL() string {
	host := s.opts.Hostname + ".local"
	for _, ip := range boardIPs() {
		if ip.To4() != nil && !ip.IsLoopback() {
			host = ip.String()
			break
		}
	}
	if s.opts.HTTPS != "" {
		return "https://" + net.JoinHostPort(host, port(s.opts.HTTPS)) + "/"
	}
	return "http://" + net.JoinHostPort(host, port(s.opts.HTTP)) + "/"
}

func port(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		return p
	}
	return addr
}

// Done yields the boot config's path when the admin pressed Start.
func (s *Server) Done() <-chan string { return s.done }

// Handler serves the page, on the plain and the HTTPS listener alike:
//
//	GET  /                       the forms, or what was written
//	POST /firstrun/start         claim, name: a new cluster of this board
//	POST /firstrun/join          claim, bundle, peers, gossip: this board in an existing cluster
//	GET  /firstrun/admin/{fetch} 410: the admin bundle is in Start's answer only
//	POST /firstrun/finish        claim: start the board
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.Handle("POST /firstrun/start", s.claimed(s.start))
	mux.Handle("POST /firstrun/join", s.claimed(s.join))
	mux.HandleFunc("GET /firstrun/admin/{fetch}", s.gone)
	mux.Handle("POST /firstrun/finish", s.claimed(s.finish))
	return s.guard(mux)
}

// maxForm bounds a POST's body: a pasted bundle is a few KiB.
const maxForm = 64 << 10

// guard is the door of every request: no cache or framing, only this
// board's names as Host (DNS rebinding), no cross-site POST, and with
// HTTPS up nothing but a redirect in clear.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		// same-origin, not no-referrer: under no-referrer a browser sends its
		// own forms' POSTs with "Origin: null" (hosts.sameSite)
		w.Header().Set("Referrer-Policy", "same-origin")
		if !s.hosts.allowed(r.Host) {
			httpx.Error(w, http.StatusMisdirectedRequest, "firstrun: host %q is not this board: open it by its address, localhost or %s.local", r.Host, s.opts.Hostname)
			return
		}
		if s.cert != nil && r.TLS == nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				host := r.Host
				if hh, _, err := net.SplitHostPort(host); err == nil {
					host = hh
				}
				host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
				to := "https://" + net.JoinHostPort(host, port(s.opts.HTTPS)) + r.URL.RequestURI()
				if r.URL.Path == "/" {
					// a page, not a bare redirect into the browser's certificate warning
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					_, _ = io.WriteString(w, plainHTML(to))
					return
				}
				http.Redirect(w, r, to, http.StatusPermanentRedirect)
				return
			}
			// JSON even to a browser: a page here would carry forms that post in clear.
			httpx.Error(w, http.StatusForbidden, "firstrun: over HTTPS only (port %s): the claim code and bundles never cross the LAN in clear", port(s.opts.HTTPS))
			return
		}
		if r.Method == http.MethodPost {
			if !s.hosts.sameSite(r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")) {
				httpx.Error(w, http.StatusForbidden, "firstrun: a cross-site form")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		}
		h.ServeHTTP(w, r)
	})
}

// claimed runs h only for a request carrying the claim code, each try
// counted and limited (guesses) before the code is compared.
func (s *Server) claimed(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			s.fail(w, r, http.StatusBadRequest, "firstrun: the form: %v", err)
			return
		}
		k := key(r)
		if wait, ok := s.tries.take(k); !ok {
			httpx.SetRetryAfter(w, wait)
			s.opts.Logger.Warn("firstrun: claim-code tries held back", "client", r.RemoteAddr, "retry", wait.Round(time.Second))
			s.fail(w, r, http.StatusTooManyRequests, "firstrun: too many claim-code tries: try again in %s", wait.Round(time.Second))
			return
		}
		if !claimMatches(s.claim, r.PostFormValue("claim")) {
			s.opts.Logger.Warn("firstrun: a wrong claim code", "client", r.RemoteAddr, "path", r.URL.Path)
			s.fail(w, r, http.StatusForbidden, "firstrun: the claim code is wrong: it is in %s on the boot partition and on the board's console", ClaimFile)
			return
		}
		s.tries.right(k)
		h(w, r)
	})
}

// fail answers an error: the page with it to a browser, {"error": ...} to
// anything else.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		httpx.Error(w, status, "%s", msg)
		return
	}
	s.mu.Lock()
	// the form is parsed already, or empty: fail reads no body
	v := view{Written: s.written, Error: msg, Secure: r.TLS != nil, Name: strings.TrimSpace(r.PostForm.Get("name")),
		Boards: r.PostForm.Get("boards"), Domain: r.PostForm.Get("domain")}
	s.mu.Unlock()
	s.render(w, status, v)
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	v := view{Written: s.written, Secure: r.TLS != nil}
	s.mu.Unlock()
	v.EnrolCode, v.EnrolURL = enrolLink(r.URL.Query())
	s.render(w, http.StatusOK, v)
}

// gone answers what was the admin bundle's one-time link: the bundle is
// in the answer to Start and nowhere else.
func (s *Server) gone(w http.ResponseWriter, r *http.Request) {
	httpx.Error(w, http.StatusGone, "firstrun: the admin bundle is given only in the answer to Start; it is not on this board")
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// start makes a new cluster of this board: this board's bundle and boot
// config on disk, the admin bundle and token in this answer only.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if !nameRe.MatchString(name) {
		s.fail(w, r, http.StatusBadRequest, "firstrun: a board name is 1 to 31 of a-z, 0-9 and -, starting with a letter or digit")
		return
	}
	p, err := parsePlan(name, r.PostFormValue("boards"), r.PostFormValue("domain"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "%v", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.setUpLocked(w, r) {
		return
	}
	now := s.opts.Now()
	var text []byte // the admin bundle, encoded before anything is written
	admin, err := bundle.NewAdmin(p.scope(), now)
	if err == nil {
		text, err = admin.Marshal()
	}
	if err == nil {
		var board *bundle.Bundle
		if board, err = admin.Board(name, p.certHosts(name), now); err == nil {
			err = s.write(name, board, p.peers(), p.gossip())
		}
	}
	if err != nil {
		s.failLocked(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	s.opts.Logger.Info("firstrun: a new cluster: the boot config and this board's bundle written; the admin bundle went out in the answer", "board", name, "boards", len(p.boards), "domain", p.domain, "config", s.written)
	s.render(w, http.StatusOK, view{Written: s.written, Token: admin.Token, Admin: string(text), Claim: showClaim(s.claim), Name: name, Secure: r.TLS != nil, Board: s.set, Plan: &p})
}

// setUpLocked answers 409 when the board is set up already (a caller
// holding mu): the first Start or Join wins, a second one writes nothing.
func (s *Server) setUpLocked(w http.ResponseWriter, r *http.Request) bool {
	if s.written == "" {
		return false
	}
	s.failLocked(w, r, http.StatusConflict, "firstrun: this board is set up already")
	return true
}

// failLocked is fail for a caller holding mu.
func (s *Server) failLocked(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	s.mu.Unlock()
	defer s.mu.Lock()
	s.fail(w, r, status, format, args...)
}

// join puts this board in an existing cluster from its board bundle
// (`ews cluster board NAME --bundle ADMIN --out FILE`, pasted) and the
// cluster's peers.
//
// With enrol_code (and enrol_url) instead of a bundle, the bundle and the
// peers are the enrolment's `ews cluster enrol` left at that URL (enrol.go).
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	var b *bundle.Bundle
	var peers []string
	if code := r.PostFormValue("enrol_code"); code != "" {
		var status int
		var err error
		if b, peers, status, err = s.enrolled(r.Context(), code, r.PostFormValue("enrol_url")); err != nil {
			s.fail(w, r, status, "%v", err)
			return
		}
	} else {
		var err error
		b, err = bundle.Parse("the pasted bundle", []byte(r.PostFormValue("bundle")))
		if err == nil {
			err = b.NeedBoard("the pasted bundle")
		}
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, "%v", err)
			return
		}
		peers = strings.FieldsFunc(r.PostFormValue("peers"), func(c rune) bool { return c == ',' || c == '\n' || c == ' ' || c == '\r' })
	}
	self := false
	for _, p := range peers {
		n, addr, ok := strings.Cut(p, "=")
		if !ok || n == "" || addr == "" {
			s.fail(w, r, http.StatusBadRequest, "firstrun: peer %q: want NAME=HOST:PORT (cluster.peers)", p)
			return
		}
		self = self || n == b.Name
	}
	if len(peers) > 0 && !self {
		s.fail(w, r, http.StatusBadRequest, "firstrun: the peers do not name this board (%s, from its bundle)", b.Name)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.setUpLocked(w, r) {
		return
	}
	if err := s.write(b.Name, b, peers, r.PostFormValue("gossip")); err != nil {
		s.failLocked(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	s.opts.Logger.Info("firstrun: joining a cluster: the boot config and this board's bundle written", "board", b.Name, "peers", len(peers), "config", s.written)
	s.render(w, http.StatusOK, view{Written: s.written, Claim: showClaim(s.claim), Name: b.Name, Secure: r.TLS != nil, Board: s.set})
}

// write puts this board's bundle and its boot config in Dir, and removes
// the claim file: the board is claimed. The caller holds mu.
func (s *Server) write(name string, b *bundle.Bundle, peers []string, gossip string) error {
	if err := os.MkdirAll(s.opts.Dir, 0o750); err != nil {
		return fmt.Errorf("firstrun: %w", err)
	}
	cpath := filepath.Join(s.opts.Dir, "ews.toml")
	if _, err := os.Stat(cpath); err == nil {
		return fmt.Errorf("firstrun: %s exists: this board has a config", cpath)
	}
	set, err := newSetUp(b)
	if err != nil {
		return err
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
	if err := bundle.WriteFile(cpath, []byte(c.String()), 0o600); err != nil {
		return fmt.Errorf("firstrun: %w", err)
	}
	s.written, s.set = cpath, set
	if err := os.Remove(s.claimAt); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logger.Warn("firstrun: the board is claimed but its claim file stays; delete it", "file", s.claimAt, "err", err)
	}
	return nil
}

// finish lets the board start.
func (s *Server) finish(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	path, set := s.written, s.set
	if path == "" {
		s.mu.Unlock()
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	first := !s.closed
	s.closed = true
	s.mu.Unlock()
	if first {
		s.done <- path
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, finishHTML(set))
}
