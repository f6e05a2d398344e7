//go:build linux

package hal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeChip is a pwmchip under a fake sysfs root that behaves like the
// kernel's: export and unexport are FIFOs served by a goroutine, which
// creates pwmN/ (period, duty_cycle, enable = 0) after an export and
// removes it after an unexport, asynchronously, as the kernel and udev do.
type fakeChip struct {
	dir string

	mu     sync.Mutex
	writes []string // "export 0", "unexport 0", in order
}

func newFakeChip(t *testing.T, root string, chip, npwm int) *fakeChip {
	t.Helper()
	c := &fakeChip{dir: filepath.Join(root, "sys/class/pwm", "pwmchip"+strconv.Itoa(chip))}
	must(t, os.MkdirAll(c.dir, 0o755))
	must(t, os.WriteFile(filepath.Join(c.dir, "npwm"), []byte(strconv.Itoa(npwm)+"\n"), 0o444))
	for _, f := range []string{"export", "unexport"} {
		fifo := filepath.Join(c.dir, f)
		must(t, syscall.Mkfifo(fifo, 0o600))
		done := make(chan struct{})
		go c.serve(t, f, fifo, done)
		t.Cleanup(func() {
			// wakes the goroutine, which sees the empty write and ends
			_ = os.WriteFile(fifo, nil, 0)
			<-done
		})
	}
	return c
}

func (c *fakeChip) serve(t *testing.T, file, fifo string, done chan struct{}) {
	defer close(done)
	for {
		b, err := os.ReadFile(fifo)
		if err != nil {
			t.Errorf("fake %s: %v", fifo, err)
			return
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return
		}
		c.mu.Lock() // logged first: the test sees the write once it sees its effect
		c.writes = append(c.writes, file+" "+v)
		c.mu.Unlock()
		pwm := filepath.Join(c.dir, "pwm"+v)
		switch file {
		case "export":
			// built aside and renamed: the channel appears whole, as the kernel's does
			tmp, err := os.MkdirTemp(filepath.Dir(c.dir), "export")
			if err != nil {
				t.Errorf("fake export: %v", err)
				return
			}
			for _, f := range []string{"period", "duty_cycle", "enable"} {
				_ = os.WriteFile(filepath.Join(tmp, f), []byte("0\n"), 0o644)
			}
			if err := os.Rename(tmp, pwm); err != nil {
				_ = os.RemoveAll(tmp) // already exported: the kernel says EBUSY
			}
		case "unexport":
			_ = os.RemoveAll(pwm)
		}
	}
}

func (c *fakeChip) log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// read returns a channel file's content ("" when missing).
func (c *fakeChip) read(t *testing.T, ch int, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "pwm"+strconv.Itoa(ch), file))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
