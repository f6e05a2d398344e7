package hal

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestSysfsPWM drives a pwm device through a fake /sys/class/pwm: export,
// period from frequency, duty_cycle from the value, enable, and unexport
// when the device closes.
func TestSysfsPWM(t *testing.T) {
	for _, c := range []struct {
		pin      string
		chip, ch int
		freq     string
		period   int64
	}{
		{"PWM0", 0, 0, "25kHz", 40000},
		{"PWM1", 0, 1, "1kHz", 1000000},
		{"GPIO18", 0, 0, "", 1000000}, // default 1 kHz
		{"GPIO12", 0, 0, "50Hz", 20000000},
		{"GPIO13", 0, 1, "10kHz", 100000},
		{"GPIO19", 0, 1, "10kHz", 100000},
		{"pwmchip2/pwm3", 2, 3, "100Hz", 10000000},
	} {
		t.Run(c.pin, func(t *testing.T) {
			root := t.TempDir()
			chip := newFakeChip(t, root, c.chip, 4)
			cfg := Config{Node: "ews1", Devices: []DeviceSpec{{Name: "fan", Driver: "pwm", Pin: c.pin, Frequency: c.freq, OnStop: "off"}}}
			ds, err := New(cfg, Options{Board: chip.board(root), Logger: testutil.Logger()})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			period := strconv.FormatInt(c.period, 10)
			if got := chip.read(t, c.ch, "period"); got != period {
				t.Errorf("period %q, want %s", got, period)
			}
			if got := chip.read(t, c.ch, "enable"); got != "1" {
				t.Errorf("enable %q, want 1", got)
			}
			if got := chip.read(t, c.ch, "duty_cycle"); got != "0" {
				t.Errorf("duty_cycle at start %q, want 0 (initial off)", got)
			}
			for _, step := range []struct {
				a    Action
				duty int64
			}{
				{Action{Kind: Set, Value: 50}, c.period / 2},
				{Action{Kind: Set, Value: 25}, c.period / 4},
				{Action{Kind: TurnOff}, 0},
				{Action{Kind: TurnOn}, c.period / 4}, // the last duty above 0
				{Action{Kind: Set, Value: 100}, c.period},
				{Action{Kind: Toggle}, 0},
			} {
				s := do(t, ds, "fan", step.a)
				if got, want := chip.read(t, c.ch, "duty_cycle"), strconv.FormatInt(step.duty, 10); got != want {
					t.Errorf("after %s: duty_cycle %q, want %s", step.a, got, want)
				}
				if s.Simulated {
					t.Errorf("after %s: snapshot says simulated on a host board", step.a)
				}
			}
			do(t, ds, "fan", Action{Kind: Set, Value: 75})
			if err := ds.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if _, err := os.Stat(filepath.Join(chip.dir, "pwm"+strconv.Itoa(c.ch))); !os.IsNotExist(err) {
				t.Errorf("the channel is still exported after Close: %v", err)
			}
			want := []string{"export " + strconv.Itoa(c.ch), "unexport " + strconv.Itoa(c.ch)}
			if got := chip.log(); !slices.Equal(got, want) {
				t.Errorf("chip saw %q, want %q", got, want)
			}
		})
	}
}

// TestSysfsPWMKept: a channel exported before ews opened it is used as it is
// and left exported at close; a duty left above the new period goes to 0
// before the period is written.
func TestSysfsPWMKept(t *testing.T) {
	root := t.TempDir()
	chip := newFakeChip(t, root, 0, 2)
	dir := filepath.Join(chip.dir, "pwm0")
	must(t, os.Mkdir(dir, 0o755))
	for f, v := range map[string]string{"period": "10000000", "duty_cycle": "9000000", "enable": "1"} {
		must(t, os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644))
	}
	b := chip.board(root)
	p, ok, err := b.sysfsPWM("PWM0")
	if err != nil || !ok {
		t.Fatalf("sysfsPWM: %v, %v", ok, err)
	}
	if p.exported {
		t.Fatal("exported a channel that was already there")
	}
	if p.duty != 9000000 {
		t.Fatalf("duty left by the earlier user read as %d", p.duty)
	}
	if err := p.PWM(0, DefaultPWMFrequency); err != nil {
		t.Fatal(err)
	}
	if p.period != 1000000 || chip.read(t, 0, "period") != "1000000" || chip.read(t, 0, "duty_cycle") != "0" {
		t.Fatalf("period %s duty %s", chip.read(t, 0, "period"), chip.read(t, 0, "duty_cycle"))
	}
	must(t, p.Close())
	if _, err := os.Stat(dir); err != nil || len(chip.log()) != 0 {
		t.Fatalf("a channel ews did not export was touched: %v, %q", err, chip.log())
	}
}

// TestSysfsPWMWaitsForEveryFile: udev hands a new channel's files to group
// gpio one by one, so period can be writable while enable is not yet (make
// hil caught ews failing on enable); ews waits for each file it writes.
func TestSysfsPWMWaitsForEveryFile(t *testing.T) {
	for _, late := range [][]string{{"enable"}, {"duty_cycle", "enable"}} {
		t.Run(strings.Join(late, ","), func(t *testing.T) {
			root := t.TempDir()
			chip := newFakeChip(t, root, 0, 2)
			chip.late = late
			cfg := Config{Node: "ews1", Devices: []DeviceSpec{{Name: "fan", Driver: "pwm", Pin: "PWM0", Initial: "on"}}}
			ds, err := New(cfg, Options{Board: chip.board(root), Logger: testutil.Logger()})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer ds.Close()
			<-chip.lateDone
			if got := chip.read(t, 0, "enable"); got != "1" {
				t.Errorf("enable %q once udev is done, want 1: ews wrote before the file was handed over", got)
			}
			if got := chip.read(t, 0, "duty_cycle"); got != "1000000" {
				t.Errorf("duty_cycle %q once udev is done, want 1000000 (initial on)", got)
			}
		})
	}
}

// TestSysfsPWMErrors: each failure names the sysfs path and what to change.
func TestSysfsPWMErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, root string)
		pin   string
		want  []string
	}{
		{"no pwmchip", func(*testing.T, string) {}, "PWM0", []string{"sys/class/pwm/pwmchip0", "dtoverlay=pwm"}},
		{"channel out of range", func(t *testing.T, root string) { newFakeChip(t, root, 0, 2) }, "PWM3", []string{"pwmchip0 has 2 PWM channels, no pwm3"}},
		{"exported but never appears", func(t *testing.T, root string) {
			newFakeChip(t, root, 0, 2) // no kernel behind the board: pwm0/ never comes
			PWMExportWait = 20 * time.Millisecond
			t.Cleanup(func() { PWMExportWait = 2 * time.Second })
		}, "PWM0", []string{"pwmchip0/pwm0/period", "after 20ms", "group gpio"}},
		{"export refused", func(t *testing.T, root string) {
			dir := filepath.Join(root, "sys/class/pwm/pwmchip0")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.Mkdir(filepath.Join(dir, "export"), 0o755)) // not writable as a file
		}, "PWM0", []string{"pwmchip0/export"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.setup(t, root)
			cfg := Config{Node: "ews1", Devices: []DeviceSpec{{Name: "fan", Driver: "pwm", Pin: c.pin}}}
			_, err := New(cfg, Options{Board: &HostBoard{Root: root}, Logger: testutil.Logger()})
			contains(t, err, append([]string{`device "fan"`}, c.want...)...)
		})
	}
}

// Two names of one PWM channel are one pin: GPIO18 and PWM0 (and GPIO12)
// cannot both be opened, whichever board they are on.
func TestPWMChannelUsedTwice(t *testing.T) {
	for _, pins := range [][2]string{{"GPIO18", "PWM0"}, {"GPIO12", "GPIO18"}, {"PWM1", "pwmchip0/pwm1"}} {
		root := t.TempDir()
		chip := newFakeChip(t, root, 0, 2)
		cfg := Config{Node: "ews1", Devices: []DeviceSpec{
			{Name: "a", Driver: "pwm", Pin: pins[0]},
			{Name: "b", Driver: "pwm", Pin: pins[1]},
		}}
		_, err := New(cfg, Options{Board: chip.board(root), Logger: testutil.Logger()})
		contains(t, err, `device "b"`, "already used by device \"a\"")
	}
}

// A Pi PWM pin without pwmchip0 falls back to the GPIO line's own PWM; when
// that fails (sysfs GPIO has none, periph's needs /dev/mem) the error says
// which overlay gives the kernel's PWM.
func TestPWMFallbackSaysWhichOverlay(t *testing.T) {
	old := SysfsRoot
	SysfsRoot = fakeSysfs(t)
	t.Cleanup(func() { SysfsRoot = old })
	cfg := Config{Node: "ews1", Devices: []DeviceSpec{{Name: "fan", Driver: "pwm", Pin: "GPIO18"}}}
	_, err := New(cfg, Options{Board: &HostBoard{Root: t.TempDir()}, Logger: testutil.Logger()})
	contains(t, err, `device "fan"`, `pin "GPIO18"`, "no /sys/class/pwm/pwmchip0", "dtoverlay=pwm")
}
