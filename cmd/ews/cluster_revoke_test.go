package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/boardrevoke"
)

func TestClusterRevoke(t *testing.T) {
	dir := t.TempDir()
	admin := filepath.Join(dir, "c.bundle")
	mustRun(t, "cluster", "init", "--board", "ews1,ews2,ews3", "--out", admin)
	b, err := bundle.Read(admin)
	if err != nil {
		t.Fatal(err)
	}
	board := filepath.Join(dir, "ews1.bundle")
	mustRun(t, "cluster", "board", "ews1", "--bundle", admin, "--out", board)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req boardrevoke.Request
		switch {
		case r.Method != http.MethodPost || r.URL.Path != boardrevoke.Path:
			http.Error(w, "wrong route", http.StatusNotFound)
		case r.Header.Get("Authorization") != "Bearer "+b.Token:
			http.Error(w, "bad token", http.StatusUnauthorized)
		case json.NewDecoder(r.Body).Decode(&req) != nil || req.Name == "":
			http.Error(w, "bad body", http.StatusBadRequest)
		case req.Name == "ews9":
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"no quorum: 1 of 3 voters reachable"}`, http.StatusServiceUnavailable)
		default:
			json.NewEncoder(w).Encode(map[string]string{"board": req.Name, "by": "admin", "at": "2026-12-02T05:00:00Z", "serial": "1f"})
		}
	}))
	defer srv.Close()
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout, or stderr when code is not exitOK
	}{
		{"revoked", []string{"ews3", "--bundle", admin, "--url", srv.URL}, exitOK, "revoked ews3 (by admin"},
		{"flags first", []string{"--bundle", admin, "--url", srv.URL, "ews3"}, exitOK, "serial 1f"},
		{"no quorum", []string{"ews9", "--bundle", admin, "--url", srv.URL}, exitError, "no quorum"},
		{"a board bundle", []string{"ews3", "--bundle", board, "--url", srv.URL}, exitUsage, "not the admin bundle"},
		{"no url", []string{"ews3", "--bundle", admin}, exitUsage, "--url"},
		{"no name", []string{"--bundle", admin, "--url", srv.URL}, exitUsage, "NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"cluster", "revoke"}, tt.args...), &out, &errb)
			got := out.String()
			if code != exitOK {
				got = errb.String()
			}
			if code != tt.code || !strings.Contains(got, tt.out) {
				t.Fatalf("exit %d, %q; want exit %d with %q", code, got, tt.code, tt.out)
			}
		})
	}
}
