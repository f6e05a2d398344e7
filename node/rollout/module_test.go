package rollout

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func pass(h http.Handler) http.Handler { return h }

// POST Path refuses what it cannot run before it reads the body: auth
// basic, an unknown executable, no SHA-256, a cluster not all running, a
// restart under way.
func TestModuleRefuses(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	running := View{Master: "ews1", Nodes: []Board{{Name: "ews1", Rank: 1, Runstate: "running"}, {Name: "ews2", Rank: 2, Runstate: "running"}}}
	down := View{Master: "ews1", Nodes: []Board{{Name: "ews1", Rank: 1, Runstate: "running"}, {Name: "ews2", Rank: 2, Runstate: "down"}}}
	tests := []struct {
		name string
		o    Options
		sum  string
		code int
		says string
	}{
		{"basic auth", Options{Basic: true, Exe: exe}, "ab", http.StatusConflict, "basic"},
		{"no executable", Options{}, "ab", http.StatusNotImplemented, "executable"},
		{"no sha256", Options{Exe: exe}, "", http.StatusBadRequest, HeaderSHA256},
		{"a board down", Options{Exe: exe, View: func() View { return down }}, "ab", http.StatusConflict, "ews2"},
		{"a restart under way", Options{Exe: exe, View: func() View { return running }, Busy: func() bool { return true }}, "ab", http.StatusConflict, "already under way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Self, tt.o.Admin, tt.o.Read, tt.o.Logger = "ews1", pass, pass, slog.New(slog.DiscardHandler)
			m := New(tt.o)
			defer m.Close()
			mux := http.NewServeMux()
			m.Routes(mux)
			r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader("binary"))
			if tt.sum != "" {
				r.Header.Set(HeaderSHA256, tt.sum)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) {
				t.Fatalf("%d %s, want %d saying %q", w.Code, w.Body, tt.code, tt.says)
			}
			if m.Status().Running {
				t.Error("a refused rollout is running")
			}
		})
	}
}

// The status a board kept before it restarted into the new binary (the
// rollout's last step) is read back, not running; a corrupt file is none.
func TestModuleStatusKept(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	kept := Status{Running: true, SHA256: "ab", Order: []string{"ews2", "ews1"}, Done: []Step{{Board: "ews2", Msg: "ok"}}}
	b, _ := json.Marshal(kept)
	testutil.WriteFile(t, exe+".rollout.json", b, 0o644)
	m := New(Options{Exe: exe, Read: pass, Admin: pass})
	mux := http.NewServeMux()
	m.Routes(mux)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, Path, nil))
	body, _ := io.ReadAll(w.Body)
	var got Status
	if err := json.Unmarshal(body, &got); err != nil || got.Running || got.SHA256 != "ab" || len(got.Done) != 1 {
		t.Fatalf("status %s (%v), want the kept one, not running", body, err)
	}
	testutil.WriteFile(t, exe+".rollout.json", []byte("{"), 0o644)
	if st := New(Options{Exe: exe}).Status(); st.SHA256 != "" {
		t.Errorf("a corrupt file read as %+v", st)
	}
}
