package node

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/boardpage"
)

// A TLS board offers the cluster CA to anyone (GET /api/cluster/ca, as
// ca.pem) and its fingerprint on /api/board, which the Board tab shows;
// the PEM is the CA the board's own certificate chains to.
func TestClusterCAOffered(t *testing.T) {
	dir := t.TempDir()
	admin, b := bundletest.Ews1(t)
	bpath := bundletest.Write(t, filepath.Join(dir, "ews1.bundle"), b)
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[cluster]\nbundle_file = \""+bpath+"\"\n[http]\nauth = \"token\"\nhttps = \"127.0.0.1:0\"\nhttp_redirect = false\nshutdown_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, _, _, _ := startNode(t, cfg)
	ca, _ := admin.CA()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	base := "https://" + n.Addr().String()

	resp, err := client.Get(base + "/api/cluster/ca")
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(pem) != string(ca.PEM) || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename="ca.pem"`) {
		t.Fatalf("GET /api/cluster/ca: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Disposition"), pem)
	}
	sum := sha256.Sum256(ca.Cert.Raw)
	want := strings.ToUpper(strings.TrimSpace(fmt.Sprintf("% x", sum)))
	want = strings.ReplaceAll(want, " ", ":")
	if got := resp.Header.Get("X-Ews-CA-Sha256"); got != want {
		t.Errorf("fingerprint header %q, want %q", got, want)
	}
	resp, err = client.Get(base + "/api/board")
	if err != nil {
		t.Fatal(err)
	}
	var info boardpage.BoardInfo
	_ = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if info.CASHA256 != want {
		t.Errorf("/api/board ca_sha256 %q, want %q", info.CASHA256, want)
	}
}
