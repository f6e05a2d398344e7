package hal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// fakeSysfs lays out /sys/class/gpio with one chip (base 0, 32 lines) and an
// already exported gpio17.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for path, v := range map[string]string{
		"gpiochip0/base": "0", "gpiochip0/ngpio": "32", "export": "",
		"gpio17/direction": "in", "gpio17/value": "0",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, p, []byte(v), 0o644)
	}
	return root
}

func TestSysfsPin(t *testing.T) {
	root := fakeSysfs(t)
	if _, err := sysfsGPIO(root, "GPIO99"); err == nil {
		t.Fatal("GPIO99 outside the chip was found")
	}
	p, err := sysfsGPIO(root, "GPIO17")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "gpio17/direction")); string(b) != "high" {
		t.Fatalf("direction = %q, want high", b)
	}
	if err := p.In(gpio.PullUp, gpio.BothEdges); err == nil || !strings.Contains(err.Error(), "pull") {
		t.Fatalf("pull-up on sysfs: %v, want an error", err)
	}
	if err := p.In(gpio.Float, gpio.RisingEdge); err != nil {
		t.Fatal(err)
	}
	if p.WaitForEdge(10 * time.Millisecond) {
		t.Fatal("edge without a change")
	}
	testutil.WriteFile(t, filepath.Join(root, "gpio17/value"), []byte("1\n"), 0o644)
	if !p.WaitForEdge(time.Second) || p.Read() != gpio.High {
		t.Fatal("rising edge not seen")
	}
	testutil.WriteFile(t, filepath.Join(root, "gpio17/value"), []byte("0\n"), 0o644)
	if p.WaitForEdge(20 * time.Millisecond) {
		t.Fatal("falling edge reported on a rising-edge pin")
	}
}
