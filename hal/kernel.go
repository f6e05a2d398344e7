package hal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where the kernel's interfaces are, under HostBoard.Root, and what a
// Raspberry Pi needs for each (hal/README.md, "On a Pi").
const (
	pwmClass   = "sys/class/pwm"
	w1Devices  = "sys/bus/w1/devices"
	gpioChips  = "dev/gpiochip*"
	hintPWM    = "add dtoverlay=pwm (GPIO18) or dtoverlay=pwm-2chan (GPIO18, GPIO19) to config.txt on the boot partition"
	hintW1     = "add dtoverlay=w1-gpio (data on GPIO4) to config.txt on the boot partition"
	hintI2C    = "add dtparam=i2c_arm=on to config.txt on the boot partition"
	hintGPIO   = "a kernel with the GPIO character device (/dev/gpiochipN), or set [node] board = \"sim\" on a machine without GPIO"
	groupGPIO  = "run as a member of group gpio (the shipped unit does: SupplementaryGroups=gpio i2c)"
	groupI2C   = "run as a member of group i2c (the shipped unit does: SupplementaryGroups=gpio i2c)"
	pwmPiChans = "GPIO12/GPIO18 = PWM0 (pwmchip0/pwm0), GPIO13/GPIO19 = PWM1 (pwmchip0/pwm1)"
)

// pwmChannel is one channel of the kernel's PWM class.
type pwmChannel struct {
	chip, ch int
	// byGPIO: named by its GPIO line (Pi mapping); without the pwmchip the
	// pin falls back to periph's own PWM.
	byGPIO bool
}

func (c pwmChannel) chipDir() string { return filepath.Join(pwmClass, "pwmchip"+strconv.Itoa(c.chip)) }

// String is the channel as a pin name: "pwmchip0/pwm1".
func (c pwmChannel) String() string {
	return "pwmchip" + strconv.Itoa(c.chip) + "/pwm" + strconv.Itoa(c.ch)
}

// parsePWMPin maps a pwm device's pin to a sysfs PWM channel: "PWM0",
// "PWM1", "pwmchipN/pwmM", or a Pi's PWM-capable GPIO (pwmPiChans).
func parsePWMPin(pin string) (pwmChannel, bool) {
	up := strings.ToUpper(pin)
	switch up {
	case "GPIO12", "GPIO18":
		return pwmChannel{0, 0, true}, true
	case "GPIO13", "GPIO19":
		return pwmChannel{0, 1, true}, true
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(up, "PWM")); err == nil && strings.HasPrefix(up, "PWM") && n >= 0 && n < 64 {
		return pwmChannel{chip: 0, ch: n}, true
	}
	chip, ch, ok := strings.Cut(pin, "/")
	if !ok || !strings.HasPrefix(chip, "pwmchip") || !strings.HasPrefix(ch, "pwm") {
		return pwmChannel{}, false
	}
	c, err1 := strconv.Atoi(strings.TrimPrefix(chip, "pwmchip"))
	n, err2 := strconv.Atoi(strings.TrimPrefix(ch, "pwm"))
	if err1 != nil || err2 != nil || c < 0 || n < 0 || n >= 64 {
		return pwmChannel{}, false
	}
	return pwmChannel{chip: c, ch: n}, true
}

// i2cDevice maps an I²C bus name ("1", "I2C1", "/dev/i2c-1") to its
// device node (without the leading "/"); false for other names.
func i2cDevice(name string) (string, bool) {
	n := strings.TrimPrefix(strings.TrimPrefix(strings.ToUpper(name), "/DEV/I2C-"), "I2C")
	if _, err := strconv.Atoi(n); err != nil {
		return "", false
	}
	return "dev/i2c-" + n, true
}

// checkI2CDevice says what is missing for bus name: its /dev/i2c-N, or the
// right to open it. Names that are not numbered buses pass.
func checkI2CDevice(join func(string) string, name string) error {
	dev, ok := i2cDevice(name)
	if !ok {
		return nil
	}
	if _, err := os.Stat(join(dev)); err != nil {
		return fmt.Errorf("no /%s: %s", dev, hintI2C)
	}
	if err := canOpen(join(dev)); err != nil {
		return fmt.Errorf("/%s: %v: %s", dev, err, groupI2C)
	}
	return nil
}

// canOpen opens path for reading and writing, as a driver would, and closes
// it again; for a sysfs attribute or device node that changes nothing.
func canOpen(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if os.IsPermission(err) {
			return fmt.Errorf("permission denied")
		}
		return err
	}
	return f.Close()
}

// canWrite opens path for writing only (sysfs export files are write-only).
func canWrite(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if os.IsPermission(err) {
			return fmt.Errorf("permission denied")
		}
		return err
	}
	return f.Close()
}
