package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestConfigCheckWarnsMissingHardware: a pwm channel whose pwmchip this
// machine lacks is a warning with the device's line and the config.txt
// line to add; check exits 0.
func TestConfigCheckWarnsMissingHardware(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ews.toml")
	doc := "[node]\nname = \"ews1\"\nboard = \"host\"\n[http]\nauth = \"none\"\n\n[[device]]\nname = \"fan\"\ndriver = \"pwm\"\npin = \"pwmchip97/pwm0\"\n"
	testutil.WriteFile(t, p, []byte(doc), 0o600)
	code, out, errs := run("config", "check", p)
	if code != exitOK || !strings.Contains(out, "1 warning") {
		t.Fatalf("exit %d, stdout %q; want 0 and 1 warning: %s", code, out, errs)
	}
	want := "config: " + p + `:10: device[0].pin: warning: device "fan": no /sys/class/pwm/pwmchip97: add dtoverlay=pwm`
	if !strings.HasPrefix(strings.TrimSpace(errs), want) {
		t.Fatalf("stderr %q, want it to start with %q", errs, want)
	}
}
