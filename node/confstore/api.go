package confstore

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/durable"
)

// MaxDocument bounds a PUT body.
const MaxDocument = 256 << 10

// Who names the user a request's credentials were checked as, and
// whether that user is an admin.
type Who func(*http.Request) (name string, admin bool)

// Register mounts the configuration API on mux (docs/NOTES.md
// "Configuration store"). Every path is admin only; guard runs first (the
// credential check, the audit log). restart lists the sections a change
// from old to cur needs a restart for (nil: every changed one).
//
//	GET  /api/config                  the document as TOML, ETag "N"
//	PUT  /api/config                  If-Match "N": the whole document → {"version","restart_needed"};
//	                                  413 when it would not fit the log even without history (MaxStored)
//	GET  /api/config/history          [{"version","who","when","note","diff"}], newest first: the versions kept
//	POST /api/config/rollback?to=N    a new version with N's text; 410 when N is no longer kept
func (s *Store) Register(mux *http.ServeMux, guard func(http.Handler) http.Handler, who Who, restart func(old, cur []byte) []string) {
	admin := func(h func(http.ResponseWriter, *http.Request, string)) http.Handler {
		return guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name, ok := who(r)
			if !ok {
				httpx.Error(w, http.StatusForbidden, "confstore: %q: admin only", name)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			h(w, r, name)
		}))
	}
	if restart == nil {
		restart = Changed
	}
	mux.Handle("GET /api/config", admin(s.serveGet))
	mux.Handle("PUT /api/config", admin(func(w http.ResponseWriter, r *http.Request, name string) {
		s.servePut(w, r, name, restart)
	}))
	mux.Handle("GET /api/config/history", admin(s.serveHistory))
	mux.Handle("POST /api/config/rollback", admin(func(w http.ResponseWriter, r *http.Request, name string) {
		s.serveRollback(w, r, name, restart)
	}))
}

func etag(n uint64) string { return `"` + strconv.FormatUint(n, 10) + `"` }

func (s *Store) serveGet(w http.ResponseWriter, r *http.Request, _ string) {
	v, ok := s.Current()
	if !ok {
		httpx.Unavailable(w, time.Second, "confstore: the configuration is not in the durable log yet")
		return
	}
	w.Header().Set("Content-Type", "application/toml")
	w.Header().Set("ETag", etag(v.Number))
	_, _ = io.WriteString(w, v.Text)
}

// Refusal is the JSON answer of a document the check refused (400): the
// error, and its every problem. The clients (ews config push, ews cluster
// restore --url) read it back.
type Refusal struct {
	Error    string    `json:"error"`
	Problems []Problem `json:"problems"`
}

// Problem is one thing a refused document has wrong, as `ews config
// check` says it (Text), with its line and key.
type Problem struct {
	Line int    `json:"line,omitempty"`
	Key  string `json:"key,omitempty"`
	Msg  string `json:"msg"`
	Text string `json:"text"`
	// Warning: a problem that does not stop the document (not answered:
	// Put refuses only on the others)
	Warning bool `json:"-"`
}

// putAnswer is a committed change.
type putAnswer struct {
	Version       uint64   `json:"version"`
	RestartNeeded []string `json:"restart_needed"`
}

func (s *Store) servePut(w http.ResponseWriter, r *http.Request, name string, restart func(old, cur []byte) []string) {
	match := strings.TrimSpace(r.Header.Get("If-Match"))
	if match == "" {
		httpx.Error(w, http.StatusPreconditionRequired, `confstore: PUT /api/config needs If-Match: "N", the version it was made from (GET /api/config's ETag)`)
		return
	}
	expect, err := strconv.ParseUint(strings.Trim(strings.TrimPrefix(match, "W/"), `"`), 10, 64)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "confstore: If-Match %.40q: not a version", match)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxDocument+1))
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "confstore: body: %v", err)
		return
	}
	if len(body) > MaxDocument {
		httpx.Error(w, http.StatusRequestEntityTooLarge, "confstore: the document is over %d bytes", MaxDocument)
		return
	}
	old, _ := s.Current()
	v, err := s.Put(r.Context(), body, expect, name, "")
	s.answer(w, old, v, err, restart)
}

func (s *Store) serveRollback(w http.ResponseWriter, r *http.Request, name string, restart func(old, cur []byte) []string) {
	to, err := strconv.ParseUint(r.URL.Query().Get("to"), 10, 64)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "confstore: rollback needs ?to=N, a version of GET /api/config/history")
		return
	}
	old, _ := s.Current()
	v, err := s.Rollback(r.Context(), to, name)
	s.answer(w, old, v, err, restart)
}

// answer writes a write's outcome: the new version (ETag) and what of it
// needs a restart, or why not.
func (s *Store) answer(w http.ResponseWriter, old, v Version, err error, restart func(old, cur []byte) []string) {
	var ce *CheckError
	var se *StaleError
	var tl *TooLargeError
	switch {
	case err == nil:
		need := restart([]byte(old.Text), []byte(v.Text))
		if need == nil {
			need = []string{}
		}
		w.Header().Set("ETag", etag(v.Number))
		httpx.JSON(w, http.StatusOK, putAnswer{Version: v.Number, RestartNeeded: need})
	case errors.As(err, &ce):
		httpx.JSON(w, http.StatusBadRequest, Refusal{Error: ce.Error(), Problems: ce.Problems})
	case errors.As(err, &se):
		w.Header().Set("ETag", etag(se.Have))
		httpx.Error(w, http.StatusPreconditionFailed, "%v", se)
	case errors.As(err, &tl):
		httpx.Error(w, http.StatusRequestEntityTooLarge, "%v", err)
	case errors.Is(err, ErrUnknownVersion):
		httpx.Error(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrPruned):
		httpx.Error(w, http.StatusGone, "%v", err)
	default:
		durable.Answer(w, err, ErrNotSeeded, ErrBehind)
	}
}

// HistoryEntry is a version as GET /api/config/history lists it.
type HistoryEntry struct {
	Version uint64    `json:"version"`
	Who     string    `json:"who"`
	When    time.Time `json:"when"`
	Note    string    `json:"note,omitempty"`
	Diff    string    `json:"diff"` // against the version before it ("" for the first kept)
}

func (s *Store) serveHistory(w http.ResponseWriter, r *http.Request, _ string) {
	vs := s.History()
	out := make([]HistoryEntry, 0, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		e := HistoryEntry{Version: vs[i].Number, Who: vs[i].Who, When: vs[i].When, Note: vs[i].Note}
		if i > 0 {
			e.Diff = Diff(vs[i-1].Text, vs[i].Text)
		}
		out = append(out, e)
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"versions": out})
}
