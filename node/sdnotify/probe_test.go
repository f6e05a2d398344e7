package sdnotify

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHTTPProbe(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	p := HTTPProbe("http", srv.URL+"/healthz", srv.Client())
	if err := p.Check(context.Background()); err != nil {
		t.Fatalf("healthy server: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := p.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("503 server: err = %v, want one naming 503", err)
	}
	srv.Close()
	if err := p.Check(context.Background()); err == nil {
		t.Fatal("closed server: no error")
	}
	if err := HTTPProbe("bad", "::not a url", nil).Check(context.Background()); err == nil {
		t.Fatal("bad url: no error")
	}
}

func TestLoopbackURL(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"0.0.0.0:8080", "http://127.0.0.1:8080/healthz"},
		{"[::]:8080", "http://127.0.0.1:8080/healthz"},
		{"[::1]:8080", "http://[::1]:8080/healthz"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000/healthz"},
		{"10.0.0.11:80", "http://10.0.0.11:80/healthz"},
	}
	for _, tt := range tests {
		a, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := LoopbackURL(a, "/healthz"); got != tt.want {
			t.Errorf("LoopbackURL(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}
