package clustertls

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRefuseBoards(t *testing.T) {
	ca := newCA(t)
	revoked := func(name string) bool { return name == "ews3" }
	start := func(name string) *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name, _ := PeerName(r.TLS)
			io.WriteString(w, name+"|")
		}))
		srv.TLS = ca.ServerConfig(issue(t, ca, name))
		RefuseBoards(srv.TLS, revoked)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	ews1, ews3 := start("ews1"), start("ews3")
	client := func(name string) *tls.Config {
		if name == "" {
			return &tls.Config{RootCAs: ca.Pool}
		}
		cfg := ca.ClientConfig(issue(t, ca, name))
		RefuseBoards(cfg, revoked)
		return cfg
	}
	tests := []struct {
		name   string
		client string // "": a browser with no certificate
		srv    *httptest.Server
		ok     bool
	}{
		{"a board to a board", "ews2", ews1, true},
		{"a browser to a board", "", ews1, true},
		{"a revoked board to a board", "ews3", ews1, false},
		{"a board to a revoked board", "ews2", ews3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: client(tt.client)}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(tt.srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
		})
	}
}
