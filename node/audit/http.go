package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Peer is another board, by its HTTP address.
type Peer struct{ Name, HTTP string }

// ServeOptions configure Handler.
type ServeOptions struct {
	Peers  func() []Peer // the other boards (this one left out or not: it is skipped by name)
	Self   string
	Client *http.Client // for the peers; default one with a 2 s timeout
	Scheme string       // "http" or "https"
}

// Answer is GET /api/audit's body.
type Answer struct {
	Entries []Entry  `json:"entries"`
	Missing []string `json:"missing,omitempty"` // boards that did not answer
}

// Handler serves GET /api/audit?limit=&before=&user=&target=: the
// cluster's entries, newest first. It asks every peer for its own
// (scope=local, with the caller's credentials) and merges; a peer that
// does not answer within the client's timeout is named in "missing".
// Credentials and rights are checked before it.
func (l *Log) Handler(o ServeOptions) http.Handler {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 2 * time.Second}
	}
	if o.Scheme == "" {
		o.Scheme = "http"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := parseFilter(r.URL.Query())
		if err != nil {
			httpx.Error(w, http.StatusBadRequest, "%v", err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		l.Sync(ctx) // what this board recorded so far is in the file
		own, err := l.Query(f)
		if err != nil {
			httpx.Error(w, http.StatusInternalServerError, "%v", err)
			return
		}
		if r.URL.Query().Get("scope") == "local" || o.Peers == nil {
			httpx.JSON(w, http.StatusOK, Answer{Entries: own})
			return
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		lists := [][]Entry{own}
		var missing []string
		for _, p := range o.Peers() {
			if p.Name == o.Self || p.HTTP == "" {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := ask(ctx, o, p, r)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					missing = append(missing, p.Name)
					return
				}
				lists = append(lists, got)
			}()
		}
		wg.Wait()
		httpx.JSON(w, http.StatusOK, Answer{Entries: Merge(f.Limit, lists...), Missing: missing})
	})
}

// ask gets peer p's own entries for the query of r.
func ask(ctx context.Context, o ServeOptions, p Peer, r *http.Request) ([]Entry, error) {
	q := r.URL.Query()
	q.Set("scope", "local")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.Scheme+"://"+p.HTTP+"/api/audit?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("audit: %s: %s", p.Name, resp.Status)
	}
	var a Answer
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20)).Decode(&a); err != nil {
		return nil, fmt.Errorf("audit: %s: %w", p.Name, err)
	}
	return a.Entries, nil
}

func parseFilter(q url.Values) (Filter, error) {
	var f Filter
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return f, fmt.Errorf("audit: limit %q: want a positive number", v)
		}
		f.Limit = n
	}
	if v := q.Get("before"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, fmt.Errorf("audit: before %q: want RFC 3339 time", v)
		}
		f.Before = t
	}
	f.User, f.Target = q.Get("user"), q.Get("target")
	return f.Norm(), nil
}

// Action names what r does, and its target, when r is an audited act
// ("" when not): device actions, CGI calls, login and logout, user
// changes, firmware upload, restart, upgrade, a board's revocation.
func Action(r *http.Request) (action, target string) {
	p := r.URL.Path
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if rest, ok := strings.CutPrefix(p, "/cgi-bin/"); ok {
			return "cgi", rest
		}
		return "", ""
	}
	if a, ok := plainActions[p]; ok {
		return a, ""
	}
	switch {
	case strings.HasPrefix(p, "/api/devices/"):
		dev, act, _ := strings.Cut(strings.TrimPrefix(p, "/api/devices/"), "/")
		return "device." + act, dev
	case strings.HasPrefix(p, "/cgi-bin/"):
		return "cgi", strings.TrimPrefix(p, "/cgi-bin/")
	case strings.HasPrefix(p, "/api/users/"):
		name, sub, _ := strings.Cut(strings.TrimPrefix(p, "/api/users/"), "/")
		switch {
		case sub != "":
			return "user." + sub, name
		case r.Method == http.MethodDelete:
			return "user.delete", name
		}
		return "user.update", name
	case p == "/api/config":
		return "config.update", "config from v" + strings.Trim(r.Header.Get("If-Match"), `"`) // the version it changed
	case p == "/api/config/rollback":
		return "config.rollback", "config back to v" + r.URL.Query().Get("to")
	}
	return "", ""
}

// plainActions are the audited paths whose act names no target: the
// path alone says what was done (board.enrol's board comes from the
// answer, in Middleware).
var plainActions = map[string]string{
	"/api/login":           "login",
	"/api/logout":          "logout",
	"/api/users":           "user.create",
	"/api/board/firmware":  "firmware.upload",
	"/api/board/restart":   "restart",
	"/api/cluster/upgrade": "upgrade",
	"/api/cluster/revoke":  "board.revoke",
	"/api/cluster/rotate":  "cluster.rotate",
	"/api/cluster/enrol":   "board.enrol",
}

// Middleware records each audited act that next answers, with its status
// and the user the credential check named (who, asked after next ran, so
// a login's verdict counts).
func (l *Log) Middleware(next http.Handler, who func(*http.Request) (user, role string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action, target := Action(r)
		if action == "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		var seen *http.Request
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), seenKey{}, &seen)))
		if seen == nil {
			seen = r
		}
		user, role := who(seen)
		switch {
		case action == "user.create" && target == "":
			target = rec.Header().Get("X-Ews-User")
		case action == "board.enrol":
			target = rec.Header().Get("X-Ews-Enrol") // node/enrolment.HeaderName: "NAME ID8"
		case action == "login" && user == "":
			user = rec.Header().Get("X-Ews-User") // the name the login was good for
		case strings.HasPrefix(action, "config.") && rec.code == http.StatusOK:
			target = configTarget(target, rec.Header().Get("ETag"))
		}
		c := httpx.Client(r)
		client := ""
		if c.IsValid() {
			client = c.String()
		}
		l.Record(Entry{User: user, Role: role, Action: action, Target: target, Result: rec.code, Client: client})
	})
}

// configTarget names the version a configuration write made, from its
// answer's ETag: "config v4 from v3", "config v5 back to v2".
func configTarget(target, etag string) string {
	v := strings.Trim(etag, `"`)
	if v == "" {
		return target
	}
	return strings.Replace(target, "config ", "config v"+v+" ", 1)
}

// seenKey lets a handler behind Middleware hand back the request as it
// knew it (with the credential verdict in its context): Seen.
type seenKey struct{}

// Seen tells Middleware the request r as checked (call it behind the
// credential check).
func Seen(r *http.Request) {
	if p, ok := r.Context().Value(seenKey{}).(**http.Request); ok {
		*p = r
	}
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes on to the writer (CGI and long answers stream).
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
