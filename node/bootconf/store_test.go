package bootconf

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// `ews config check` warns when the store this board keeps differs from
// the boot file's cluster-wide sections.
func TestStoreWarnings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ews1.toml")
	boot := "[node]\nname = \"ews1\"\n[sim]\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"
	testutil.WriteFile(t, p, []byte(boot), 0o600)
	kept := func(text string) {
		b, _ := json.Marshal(map[string]any{"v": 1, "versions": []map[string]any{{"version": 4, "text": text}}})
		testutil.WriteFile(t, filepath.Join(dir, "ews1.config.json"), b, 0o600)
	}
	cfg, err := config.Load(p, CheckConfig)
	if err != nil {
		t.Fatal(err)
	}
	if w := StoreWarnings(cfg); w != nil {
		t.Errorf("no store kept: %v", w)
	}
	kept("[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n")
	if w := StoreWarnings(cfg); w != nil {
		t.Errorf("the same sections: %v", w)
	}
	kept("[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n")
	if w := StoreWarnings(cfg); len(w) != 1 || !w[0].Warning || !strings.Contains(w[0].Msg, "version 4") || !strings.Contains(w[0].Msg, "[device]") {
		t.Errorf("a different store: %v", w)
	}
}
