package node

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestBoardConfigForBackup: GET /api/board/config needs credentials and
// leaves the inline token out unless asked.
func TestBoardConfigForBackup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ews.toml")
	doc := "[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n"
	testutil.WriteFile(t, p, []byte(doc), 0o600)
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	_, url, _, _ := startNode(t, cfg)
	if code, _, _ := getJSON(t, "GET", url+"/api/board/config", nil, nil); code != 401 {
		t.Fatalf("without credentials: %d, want 401", code)
	}
	code, _, b := getJSON(t, "GET", url+"/api/board/config", nil, bearer)
	text, _ := b["config"].(string)
	if code != 200 || strings.Contains(text, "board-test-token-1") || !strings.Contains(text, "# http.token: secret left out") || b["name"] != "ews1" {
		t.Fatalf("GET /api/board/config = %d %v", code, b)
	}
	if _, _, b := getJSON(t, "GET", url+"/api/board/config?secrets=1", nil, bearer); b["config"] != doc {
		t.Errorf("secrets=1: %v", b["config"])
	}
}
