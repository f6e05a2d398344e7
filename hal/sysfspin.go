package hal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// SysfsRoot is where the legacy sysfs GPIO interface lives.
var SysfsRoot = "/sys/class/gpio"

// sysfsEdgePoll is how often a sysfsPin samples its line to find edges.
const sysfsEdgePoll = 5 * time.Millisecond

// sysfsPin is the fallback for kernels without the GPIO character device,
// where periph skips its own sysfs driver (it needs ioctl-gpio loaded). It
// drives /sys/class/gpio/gpioN and finds edges by sampling, which is enough
// for buttons and contacts; it has no pull resistors and no PWM.
type sysfsPin struct {
	root string
	n    int

	mu       sync.Mutex
	exported bool
	edge     gpio.Edge
	last     gpio.Level
}

// sysfsGPIO returns the sysfs line for "GPIO17" or "17" when root has GPIO
// chips; numbers are global line numbers.
func sysfsGPIO(root, name string) (*sysfsPin, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(name), "GPIO"))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("hal: %q is not a sysfs GPIO number", name)
	}
	chips, _ := filepath.Glob(filepath.Join(root, "gpiochip*"))
	for _, c := range chips {
		base, err1 := readInt(filepath.Join(c, "base"))
		count, err2 := readInt(filepath.Join(c, "ngpio"))
		if err1 == nil && err2 == nil && n >= base && n < base+count {
			return &sysfsPin{root: root, n: n}, nil
		}
	}
	return nil, fmt.Errorf("hal: no sysfs GPIO %d under %s", n, root)
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func (p *sysfsPin) dir() string { return filepath.Join(p.root, "gpio"+strconv.Itoa(p.n)) }

// export makes gpioN appear; the caller holds mu.
func (p *sysfsPin) export() error {
	if p.exported {
		return nil
	}
	if _, err := os.Stat(p.dir()); err != nil {
		if err := os.WriteFile(filepath.Join(p.root, "export"), []byte(strconv.Itoa(p.n)), 0); err != nil {
			return fmt.Errorf("hal: export GPIO%d: %w", p.n, err)
		}
	}
	p.exported = true
	return nil
}

func (p *sysfsPin) write(file, v string) error {
	if err := os.WriteFile(filepath.Join(p.dir(), file), []byte(v), 0); err != nil {
		return fmt.Errorf("hal: GPIO%d %s: %w", p.n, file, err)
	}
	return nil
}

func (p *sysfsPin) String() string   { return p.Name() }
func (p *sysfsPin) Name() string     { return "GPIO" + strconv.Itoa(p.n) }
func (p *sysfsPin) Number() int      { return p.n }
func (p *sysfsPin) Function() string { return "sysfs" }
func (p *sysfsPin) Halt() error      { return nil }

func (p *sysfsPin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pull != gpio.Float && pull != gpio.PullNoChange {
		return errors.New("hal: sysfs GPIO cannot set pull resistors; use an external resistor or pull = \"none\"")
	}
	if err := p.export(); err != nil {
		return err
	}
	if err := p.write("direction", "in"); err != nil {
		return err
	}
	p.edge = edge
	p.last = p.readLocked()
	return nil
}

func (p *sysfsPin) readLocked() gpio.Level {
	b, err := os.ReadFile(filepath.Join(p.dir(), "value"))
	return err == nil && len(b) > 0 && b[0] == '1'
}

func (p *sysfsPin) Read() gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readLocked()
}

// WaitForEdge samples the line until it changes in the configured direction.
func (p *sysfsPin) WaitForEdge(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		l := p.readLocked()
		prev := p.last
		p.last = l
		edge := p.edge
		p.mu.Unlock()
		if l != prev && (edge == gpio.BothEdges || (edge == gpio.RisingEdge && l) || (edge == gpio.FallingEdge && !l)) {
			return true
		}
		if timeout >= 0 && time.Now().After(deadline) {
			return false
		}
		time.Sleep(sysfsEdgePoll) // sampling period of the line, not a wait for a condition
	}
}

func (p *sysfsPin) Pull() gpio.Pull        { return gpio.PullNoChange }
func (p *sysfsPin) DefaultPull() gpio.Pull { return gpio.PullNoChange }

func (p *sysfsPin) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.export(); err != nil {
		return err
	}
	// "high"/"low" set direction and level at once, without a glitch
	v := "low"
	if l {
		v = "high"
	}
	return p.write("direction", v)
}

func (p *sysfsPin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("hal: sysfs GPIO has no PWM")
}

var _ gpio.PinIO = (*sysfsPin)(nil)
