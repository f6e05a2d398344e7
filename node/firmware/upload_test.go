package firmware

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// POST Path refuses before it writes anything: an unknown executable, no
// SHA-256, a body over MaxBytes, a restart under way.
func TestUploadRefuses(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	pass := func(h http.Handler) http.Handler { return h }
	tests := []struct {
		name   string
		o      UploadOptions
		sum    string
		length int64
		code   int
		says   string
	}{
		{"no executable", UploadOptions{}, "ab", 10, http.StatusNotImplemented, "unknown"},
		{"no sha256", UploadOptions{Exe: exe}, "", 10, http.StatusBadRequest, HeaderSHA256},
		{"too large", UploadOptions{Exe: exe}, "ab", MaxBytes + 1, http.StatusRequestEntityTooLarge, "larger"},
		{"a restart under way", UploadOptions{Exe: exe, Busy: func() bool { return true }}, "ab", 10, http.StatusConflict, "already under way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Admin = pass
			if tt.o.Busy == nil {
				tt.o.Busy = func() bool { return false }
			}
			tt.o.Exit = func() bool { t.Error("asked to restart"); return false }
			mux := http.NewServeMux()
			NewUpload(tt.o).Routes(mux)
			r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader("0123456789"))
			r.ContentLength = tt.length
			if tt.sum != "" {
				r.Header.Set(HeaderSHA256, tt.sum)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) {
				t.Fatalf("%d %s, want %d saying %q", w.Code, w.Body, tt.code, tt.says)
			}
		})
	}
}
