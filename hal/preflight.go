package hal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Preflight reports, without opening any device, each kernel interface a
// device of this board needs that is missing or out of this user's reach
// under root ("" = "/"): a pwmchip (dtoverlay=pwm), the w1 bus
// (dtoverlay=w1-gpio), /dev/i2c-N (dtparam=i2c_arm=on), a GPIO chip, or
// the group that opens them. Each is a *SpecError naming the device, the
// key and what to add. `ews config check` prints them as warnings and `ews
// run` logs them at start: the file is right, this machine is not (yet)
// the board. A simulated board, and devices of other boards, need nothing.
func Preflight(cfg Config, root string) SpecErrors {
	if kind, err := cfg.Kind(); err != nil || kind != BoardHost {
		return nil
	}
	join := (&HostBoard{Root: root}).path()
	var out SpecErrors
	for i, s := range cfg.Devices {
		d := lookup(s.Driver)
		if !wiredHere(s, cfg.Node) || d == nil || d.Simulated {
			continue
		}
		warn := func(key, format string, args ...any) {
			out = append(out, &SpecError{Index: i, Device: s.Name, Key: key, Err: fmt.Errorf(format, args...)})
		}
		switch {
		case s.Driver == "pwm":
			if c, ok := parsePWMPin(s.Pin); ok {
				preflightPWM(join, c, s.Pin, warn)
				continue
			}
			preflightGPIO(join, warn)
		case s.Driver == "ds18b20":
			if _, err := os.Stat(join(w1Devices)); err != nil {
				warn("bus", "no /%s: %s", w1Devices, hintW1)
			}
		case s.Driver == "bmxx80":
			if err := checkI2CDevice(join, s.Bus); err != nil {
				warn("bus", "%v", err)
			}
		case d.Needs == NeedsPin:
			preflightGPIO(join, warn)
		}
	}
	return out
}

func preflightPWM(join func(string) string, c pwmChannel, pin string, warn func(key, format string, args ...any)) {
	chip := c.chipDir()
	if _, err := os.Stat(join(chip)); err != nil {
		if c.byGPIO {
			warn("pin", "no /%s for hardware PWM on %s (%s): %s", chip, pin, pwmPiChans, hintPWM)
		} else {
			warn("pin", "no /%s: %s", chip, hintPWM)
		}
		return
	}
	if err := canWrite(join(filepath.Join(chip, "export"))); err != nil {
		warn("pin", "/%s/export: %v: %s", chip, err, groupGPIO)
	}
}

func preflightGPIO(join func(string) string, warn func(key, format string, args ...any)) {
	chips, _ := filepath.Glob(join(gpioChips))
	if len(chips) == 0 {
		legacy, _ := filepath.Glob(join("sys/class/gpio/gpiochip*"))
		if len(legacy) == 0 {
			warn("pin", "no GPIO chip: looked for /%s and /sys/class/gpio/gpiochip*; needs %s", gpioChips, hintGPIO)
		}
		return
	}
	if err := canOpen(chips[0]); err != nil {
		warn("pin", "%s: %v: %s", chips[0], err, groupGPIO)
	}
}
