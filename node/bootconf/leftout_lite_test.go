//go:build lite

package bootconf

import (
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// testKey is a cluster key for configs with peers (32 bytes, base64).
const testKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// TestLeftOutLite: each section the lite build leaves out is refused by its
// key (docs/NOTES.md "The lite build"); a config without them passes.
func TestLeftOutLite(t *testing.T) {
	for _, tc := range []struct {
		name, extra, key string
	}{
		{"none", "", ""},
		{"mqtt", "[mqtt]\nbroker = \"tcp://127.0.0.1:1883\"\n", "mqtt"},
		{"vip", "[cluster]\npeers = [\"ews1=127.0.0.1:7946\", \"ews2=127.0.0.1:7947\"]\nkey = \"" + testKey + "\"\nvip = \"10.0.0.9/24\"\n", "cluster.vip"},
		{"ntp", "[cluster]\nntp = [\"127.0.0.1\"]\n", "cluster.ntp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse("ews.toml", []byte("[node]\nname = \"ews1\"\n"+tc.extra))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			errs := leftOut(c)
			if tc.key == "" {
				if len(errs) != 0 {
					t.Fatalf("leftOut = %v, want none", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs.Error(), tc.key) || !strings.Contains(errs.Error(), "not in the lite build") {
				t.Fatalf("leftOut = %v, want one error naming %s", errs, tc.key)
			}
		})
	}
}
