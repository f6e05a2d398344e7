package main

import (
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// An inline http.token on the FAT boot partition is warned about:
// `ews config check` (and run) say so, with the line (docs/NOTES.md,
// Secrets and the bundle).
func TestPreflightWarnsInlineTokenOnBoot(t *testing.T) {
	doc := "[node]\nname = \"ews1\"\n[http]\nauth = \"token\"\ntoken = \"s3cret\"\n"
	cases := []struct {
		path string
		warn bool
	}{
		{"/boot/firmware/ews.toml", true},
		{"/boot/ews.toml", true},
		{"/etc/ews/ews.toml", false},
	}
	for _, c := range cases {
		cfg, err := config.Parse(c.path, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		_, warns := preflight(cfg)
		var hit *config.Error
		for _, w := range warns {
			if w.Key == "http.token" && strings.Contains(w.Msg, "boot partition") {
				hit = w
			}
		}
		if (hit != nil) != c.warn {
			t.Fatalf("%s: warning %v, want %v (%v)", c.path, hit, c.warn, warns)
		}
		if hit != nil && (hit.Line != 5 || strings.Contains(hit.Error(), "s3cret")) {
			t.Fatalf("%s: warning at line %d, or it shows the token: %v", c.path, hit.Line, hit)
		}
	}
}
