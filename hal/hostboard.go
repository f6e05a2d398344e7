package hal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/onewire"
	"periph.io/x/conn/v3/onewire/onewirereg"

	// Only the kernel-interface drivers: the GPIO character device, sysfs
	// and the w1 netlink bus. periph's host root would also register every
	// SoC's memory-mapped driver (bcm283x, allwinner, ...), which needs
	// /dev/mem the unit denies and costs ~0.4 MB of binary (docs/NOTES.md "Host drivers only").
	_ "periph.io/x/host/v3/gpioioctl"
	_ "periph.io/x/host/v3/netlink"
	"periph.io/x/host/v3/sysfs"
)

// HostBoard is the real hardware as periph.io's host drivers see it: the GPIO
// character device (gpioioctl) first, sysfs GPIO as the fallback, and the
// I²C and 1-wire buses registered by name; hardware PWM through the
// kernel's /sys/class/pwm and DS18B20s through its w1 bus (sysfs), which
// need neither /dev/mem nor root.
type HostBoard struct {
	// Root is where the kernel's interfaces are: Root/sys/class/pwm,
	// Root/sys/bus/w1, Root/dev/i2c-N. NewHostBoard sets "/"; a test points
	// it at a fake tree. A zero HostBoard is usable.
	Root string
	// afterWrite, when set, runs after each write to a sysfs control file
	// (export, unexport): a test's fake kernel.
	afterWrite func(path string)

	mu      sync.Mutex
	i2c     map[string]i2c.BusCloser
	onewire map[string]onewire.BusCloser
}

var hostInit = sync.OnceValues(driverreg.Init)

// NewHostBoard loads periph's host drivers; it fails when none of them found
// a GPIO pin or bus to drive.
func NewHostBoard() (*HostBoard, error) {
	state, err := hostInit()
	if err != nil {
		return nil, fmt.Errorf("hal: periph host init: %w", err)
	}
	chips, _ := filepath.Glob(filepath.Join(SysfsRoot, "gpiochip*"))
	pwms, _ := filepath.Glob(filepath.Join("/", pwmClass, "pwmchip*"))
	_, w1err := os.Stat(filepath.Join("/", w1Devices))
	if len(gpioreg.All()) == 0 && len(i2creg.All()) == 0 && len(onewirereg.All()) == 0 && len(chips) == 0 && len(pwms) == 0 && w1err != nil {
		var why []string
		for _, f := range append(state.Failed, state.Skipped...) {
			why = append(why, f.String())
		}
		return nil, fmt.Errorf("%w: looked for /dev/gpiochip*, %s/gpiochip*, /dev/i2c-*, /%s/pwmchip*, /%s, 1-wire buses (periph: %s)",
			ErrNoHardware, SysfsRoot, pwmClass, w1Devices, strings.Join(why, "; "))
	}
	return &HostBoard{Root: "/"}, nil
}

// Kind is "host".
func (b *HostBoard) Kind() string { return "host" }

// Pin looks name up in periph's registry (character-device lines first, as
// periph registers them), then as a sysfs GPIO number ("GPIO17" or "17"),
// through periph's sysfs driver or, on kernels where periph skipped it,
// through the sysfs fallback of this package.
func (b *HostBoard) Pin(name string) (gpio.PinIO, error) {
	if p := gpioreg.ByName(name); p != nil {
		return p, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(name), "GPIO")); err == nil {
		if p := gpioreg.ByName("GPIO" + strconv.Itoa(n)); p != nil {
			return p, nil
		}
		if p, ok := sysfs.Pins[n]; ok {
			return p, nil
		}
	}
	if p, err := sysfsGPIO(SysfsRoot, name); err == nil {
		return p, nil
	}
	return nil, fmt.Errorf("hal: no GPIO pin %q on this board", name)
}

// I2C opens (once) the bus called name.
// A bus with a number whose /dev/i2c-N is missing or not readable and
// writable by this user fails with what to change (see i2cDevice).
func (b *HostBoard) I2C(name string) (i2c.Bus, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bus, ok := b.i2c[name]; ok {
		return bus, nil
	}
	if err := checkI2CDevice(b.path(), name); err != nil {
		return nil, fmt.Errorf("hal: open I2C bus %q: %w", name, err)
	}
	bus, err := i2creg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("hal: open I2C bus %q: %w", name, err)
	}
	if b.i2c == nil {
		b.i2c = map[string]i2c.BusCloser{}
	}
	b.i2c[name] = bus
	return bus, nil
}

// OneWire opens (once) the bus called name.
func (b *HostBoard) OneWire(name string) (onewire.Bus, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bus, ok := b.onewire[name]; ok {
		return bus, nil
	}
	bus, err := onewirereg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("hal: open 1-wire bus %q: %w", name, err)
	}
	if b.onewire == nil {
		b.onewire = map[string]onewire.BusCloser{}
	}
	b.onewire[name] = bus
	return bus, nil
}

// Close closes every bus opened.
func (b *HostBoard) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for _, bus := range b.i2c {
		errs = append(errs, bus.Close())
	}
	for _, bus := range b.onewire {
		errs = append(errs, bus.Close())
	}
	b.i2c, b.onewire = nil, nil
	return errors.Join(errs...)
}

// path returns a function joining Root ("" = "/") and a path.
func (b *HostBoard) path() func(string) string {
	root := b.Root
	if root == "" {
		root = "/"
	}
	return func(p string) string { return filepath.Join(root, p) }
}
