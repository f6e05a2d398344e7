package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/rotate"
)

// `ews cluster rotate` against a fake board: the admin bundle is
// rewritten with the new key (the old one kept as the store's) once the
// board committed; a board bundle is refused (exit 2); a 409, a 503 or a
// roll that does not finish in --timeout exit 1 saying why.
func TestClusterRotate(t *testing.T) {
	dir := t.TempDir()
	adminPath := filepath.Join(dir, "c.bundle")
	mustRun(t, "cluster", "init", "--board", "ews1,ews2,ews3", "--out", adminPath)
	boardPath := filepath.Join(dir, "ews1.bundle")
	mustRun(t, "cluster", "board", "ews1", "--bundle", adminPath, "--out", boardPath)
	first, err := bundle.Read(adminPath)
	if err != nil {
		t.Fatal(err)
	}
	verify, err := first.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	var answer atomic.Value // what the board answers: "ok", "rolling", "quorum", "stuck", "busy" (a rotation rolling already), "wrapped", "last"
	var posted atomic.Bool  // a rotation was committed: GET answers generation 1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := answer.Load().(string)
		if r.URL.Path != rotate.Path || r.Header.Get("Authorization") != "Bearer "+first.Token {
			http.Error(w, "wrong route or token", http.StatusUnauthorized)
			return
		}
		// a board that took a forged rotation (the old build) says its
		// generation, and commits whatever generation it is sent
		forged := map[string]uint64{"wrapped": math.MaxUint64, "last": rotate.MaxGen}[mode]
		if forged != 0 {
			json.NewEncoder(w).Encode(map[string]any{"gen": forged, "phase": "done", "finished": true, "waiting": []string{}})
			return
		}
		if r.Method == http.MethodGet {
			if !posted.Load() {
				json.NewEncoder(w).Encode(map[string]any{"gen": 0, "finished": mode != "busy", "phase": "install", "waiting": []string{"ews3"}})
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"gen": 1, "phase": "use", "finished": mode != "stuck", "waiting": []string{"ews2"}})
			return
		}
		var req rotate.Request
		switch {
		case json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Key) != 32 || len(req.Session) != 32 || req.StoreID != rotate.StoreID(first.Store()):
			http.Error(w, "bad body", http.StatusBadRequest)
		case req.Gen != 1 || !rotate.Verify(verify, req.Gen, req.Key, req.Session, req.Sig):
			http.Error(w, "not signed for generation 1", http.StatusForbidden)
		case mode == "rolling":
			http.Error(w, `{"error":"rotate: rotation 1 is still rolling"}`, http.StatusConflict)
		case mode == "quorum":
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"no quorum: 1 of 3 voters reachable"}`, http.StatusServiceUnavailable)
		default:
			posted.Store(true)
			json.NewEncoder(w).Encode(map[string]any{"gen": 1, "phase": "install", "waiting": []string{"ews1", "ews2"}})
		}
	}))
	defer srv.Close()
	tests := []struct {
		name, mode string
		args       []string
		code       int
		says       string // in stdout, or stderr when code is not exitOK
		rewritten  bool
	}{
		{"a board bundle", "ok", []string{"--bundle", boardPath, "--url", srv.URL}, exitUsage, "not the admin bundle", false},
		{"no url", "ok", []string{"--bundle", adminPath}, exitUsage, "--url", false},
		{"a rotation rolling", "rolling", []string{"--bundle", adminPath, "--url", srv.URL}, exitError, "still rolling", false},
		{"no quorum", "quorum", []string{"--bundle", adminPath, "--url", srv.URL}, exitError, "no quorum", false},
		{"a rotation rolling, seen before making one", "busy", []string{"--bundle", adminPath, "--url", srv.URL}, exitError, "waiting for ews3", false},
		{"rotated", "ok", []string{"--bundle", adminPath, "--url", srv.URL}, exitOK, "rolled through every live board", true},
		{"a board at generation 2^64-1: no wrap to 0", "wrapped", []string{"--bundle", adminPath, "--url", srv.URL}, exitError, "no rotation can follow", false},
		{"a board at the last generation a bundle holds", "last", []string{"--bundle", adminPath, "--url", srv.URL}, exitError, "no rotation can follow", false},
		{"a roll that does not finish", "stuck", []string{"--bundle", adminPath, "--url", srv.URL, "--timeout", "300ms"}, exitError, "waiting for ews2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer.Store(tt.mode)
			posted.Store(false)
			before, _ := bundle.Read(adminPath)
			beforeText, _ := os.ReadFile(adminPath)
			var out, errb bytes.Buffer
			code := Main(append([]string{"cluster", "rotate"}, tt.args...), &out, &errb)
			got := out.String() + errb.String()
			if code != tt.code || !strings.Contains(got, tt.says) {
				t.Fatalf("exit %d, %q; want exit %d with %q", code, got, tt.code, tt.says)
			}
			afterText, _ := os.ReadFile(adminPath)
			after, err := bundle.Read(adminPath)
			if err != nil || after.CAKey == "" || after.SignKey == "" {
				t.Fatalf("the admin bundle after the rotation (%d bytes, was %d) is no admin bundle: %v", len(afterText), len(beforeText), err)
			}
			if !tt.rewritten && !bytes.Equal(afterText, beforeText) {
				t.Fatalf("the admin bundle changed (%d bytes, was %d) though nothing was committed", len(afterText), len(beforeText))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Fatalf("left beside the bundles: %v", ents)
			}
			if rewritten := after.Key != before.Key; rewritten != tt.rewritten {
				t.Fatalf("admin bundle rewritten %v, want %v", rewritten, tt.rewritten)
			}
			if tt.rewritten && (after.StoreKey != first.Key || after.Generation != 1 || after.Token != first.Token || after.SessionSecret == before.SessionSecret) {
				t.Fatalf("rewritten bundle: store_key the first key %v, generation %d, token kept %v, new session %v",
					after.StoreKey == first.Key, after.Generation, after.Token == first.Token, after.SessionSecret != before.SessionSecret)
			}
		})
	}
}
