package sdnotify

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A board's watchdog round passes while /healthz answers, the cluster's
// state reads and the helpers' loop is alive; each of the three failing
// fails the round, naming what.
func TestBoardProbes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	block := make(chan struct{})
	defer close(block)
	tests := []struct {
		name    string
		srv     *httptest.Server
		cluster func()
		helpers func(context.Context) error
		says    string // "" passes
	}{
		{"all well", srv, func() {}, func(context.Context) error { return nil }, ""},
		{"HTTP down", down, func() {}, func(context.Context) error { return nil }, "http"},
		{"cluster locked", srv, func() { <-block }, func(context.Context) error { return nil }, "cluster"},
		{"helpers stuck", srv, func() {}, func(context.Context) error { return errors.New("watch loop stuck") }, "watch loop stuck"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Board(slog.New(slog.DiscardHandler), BoardOptions{Addr: tt.srv.Listener.Addr(), Cluster: tt.cluster, Helpers: tt.helpers},
				withNotifier(func(string) (bool, error) { return true, nil }), withInterval(200*time.Millisecond))
			err := w.round(t.Context())
			switch {
			case tt.says == "" && err != nil:
				t.Fatalf("round: %v", err)
			case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
				t.Fatalf("round: %v, want %q", err, tt.says)
			}
		})
	}
}
