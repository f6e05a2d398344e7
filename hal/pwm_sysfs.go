package hal

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// PWMExportWait bounds the wait, after exporting a PWM channel, for its
// pwmN directory to appear and become writable: the kernel creates it at
// once, udev then hands it to group gpio.
var PWMExportWait = 2 * time.Second

// sysfsPWM drives one hardware PWM channel through the kernel's PWM class
// (Root/sys/class/pwm/pwmchipN/pwmM): export, period, duty_cycle, enable,
// and unexport on Close when it exported the channel. Times are in ns. The
// Device around it serialises calls.
type sysfsPWM struct {
	chip     string // .../pwmchipN
	dir      string // .../pwmchipN/pwmM
	ch       int
	exported bool
	after    func(path string) // HostBoard.afterWrite
	period   int64             // last period written; 0: none yet
	duty     int64
	enabled  bool
}

// sysfsPWM opens the PWM channel pin names (parsePWMPin). ok is false when
// pin is no PWM channel here, so the caller falls back to periph's pin PWM:
// a Pi GPIO name on a board without the pwmchip.
func (b *HostBoard) sysfsPWM(pin string) (p *sysfsPWM, ok bool, err error) {
	c, ok := parsePWMPin(pin)
	if !ok {
		return nil, false, nil
	}
	join := b.path()
	chip := join(c.chipDir())
	if _, err := os.Stat(chip); err != nil {
		if c.byGPIO {
			return nil, false, nil
		}
		return nil, true, fmt.Errorf("hal: no %s: %s", chip, hintPWM)
	}
	p, err = openSysfsPWM(chip, c.ch, b.afterWrite)
	return p, true, err
}

func openSysfsPWM(chip string, ch int, after func(string)) (*sysfsPWM, error) {
	p := &sysfsPWM{chip: chip, ch: ch, dir: filepath.Join(chip, "pwm"+strconv.Itoa(ch)), after: after}
	if n, err := readInt(filepath.Join(chip, "npwm")); err == nil && ch >= n {
		return nil, fmt.Errorf("hal: %s has %d PWM channels, no pwm%d", chip, n, ch)
	}
	if _, err := os.Stat(p.dir); err != nil {
		if err := p.control("export"); err != nil {
			return nil, fmt.Errorf("hal: export PWM channel %d: %w", ch, err)
		}
		p.exported = true
	}
	if v, err := readInt64(filepath.Join(p.dir, "duty_cycle")); err == nil {
		p.duty = v // left by an earlier user: keep duty_cycle <= period from the first write
	}
	// every file written later: udev hands them to group gpio one by one
	// (make hil saw period writable and enable not yet)
	deadline := time.Now().Add(PWMExportWait)
	for _, f := range pwmFiles {
		if err := waitWritable(filepath.Join(p.dir, f), deadline, PWMExportWait); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("hal: PWM channel %d exported but %w (%s)", ch, err, groupGPIO)
		}
	}
	return p, nil
}

// pwmFiles are the channel files a sysfsPWM writes.
var pwmFiles = []string{"period", "duty_cycle", "enable"}

// waitWritable polls until path opens for writing or deadline passes
// (limit is the whole wait, for the message).
func waitWritable(path string, deadline time.Time, limit time.Duration) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := canWrite(path)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %v after %v", path, err, limit)
		}
		time.Sleep(wait) // the kernel and udev set the channel up on their own; nothing to wait on
	}
}

func (p *sysfsPWM) write(file string, v int64) error {
	path := filepath.Join(p.dir, file)
	if err := os.WriteFile(path, []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("hal: write %d to %s: %w", v, path, err)
	}
	return nil
}

// PWM sets duty (of gpio.DutyMax) at freq. duty_cycle never exceeds
// period, as the kernel requires at every write: when the period changes
// the duty goes to 0 first.
func (p *sysfsPWM) PWM(duty gpio.Duty, freq physic.Frequency) error {
	if freq <= 0 {
		return fmt.Errorf("hal: %s: frequency %v", p.dir, freq)
	}
	period := freq.Period().Nanoseconds()
	if period <= 0 {
		return fmt.Errorf("hal: %s: frequency %v is above what a ns period can hold", p.dir, freq)
	}
	d := int64(math.Round(float64(duty) / float64(gpio.DutyMax) * float64(period)))
	d = min(max(d, 0), period)
	if period != p.period {
		if p.duty > period {
			if err := p.write("duty_cycle", 0); err != nil {
				return err
			}
			p.duty = 0
		}
		if err := p.write("period", period); err != nil {
			return err
		}
		p.period = period
	}
	if d != p.duty || !p.enabled {
		if err := p.write("duty_cycle", d); err != nil {
			return err
		}
		p.duty = d
	}
	if !p.enabled {
		if err := p.write("enable", 1); err != nil {
			return err
		}
		p.enabled = true
	}
	return nil
}

// Name is the channel's sysfs path.
func (p *sysfsPWM) Name() string { return p.dir }

// Close unexports the channel if it exported it; the output's last state is
// then the kernel driver's to keep (on_stop = "off" writes 0 before).
func (p *sysfsPWM) Close() error {
	if !p.exported {
		return nil
	}
	p.exported = false
	if err := p.control("unexport"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("hal: unexport PWM channel %d: %w", p.ch, err)
	}
	return nil
}

// control writes the channel number to the chip's export or unexport.
func (p *sysfsPWM) control(file string) error {
	path := filepath.Join(p.chip, file)
	if err := os.WriteFile(path, []byte(strconv.Itoa(p.ch)), 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if p.after != nil {
		p.after(path)
	}
	return nil
}

// readInt64 reads a sysfs number.
func readInt64(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
