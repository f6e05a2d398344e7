package hal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeChip is a pwmchip under a fake sysfs root that behaves like the
// kernel's: after "N" is written to export (a plain file here) pwmN/
// appears with period, duty_cycle and enable = 0; after unexport it is
// gone. HostBoard.afterWrite runs it, as the kernel runs at the write.
type fakeChip struct {
	t   *testing.T
	dir string

	// late, when set, are channel files the export makes only later, from
	// a goroutine (udev handing them to group gpio one by one); lateDone
	// closes when they are there.
	late     []string
	lateDone chan struct{}

	mu     sync.Mutex
	writes []string // "export 0", "unexport 0", in order
}

func newFakeChip(t *testing.T, root string, chip, npwm int) *fakeChip {
	t.Helper()
	c := &fakeChip{t: t, dir: filepath.Join(root, "sys/class/pwm", "pwmchip"+strconv.Itoa(chip))}
	must(t, os.MkdirAll(c.dir, 0o755))
	must(t, os.WriteFile(filepath.Join(c.dir, "npwm"), []byte(strconv.Itoa(npwm)+"\n"), 0o444))
	for _, f := range []string{"export", "unexport"} {
		must(t, os.WriteFile(filepath.Join(c.dir, f), nil, 0o200))
	}
	return c
}

// board is a host board on root with this chip's kernel behind it.
func (c *fakeChip) board(root string) *HostBoard {
	return &HostBoard{Root: root, afterWrite: c.kernel}
}

// kernel does what the kernel does for the write just made to path.
func (c *fakeChip) kernel(path string) {
	if filepath.Dir(path) != c.dir {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		c.t.Errorf("fake kernel: %v", err)
		return
	}
	file, v := filepath.Base(path), strings.TrimSpace(string(b))
	c.mu.Lock()
	c.writes = append(c.writes, file+" "+v)
	c.mu.Unlock()
	pwm := filepath.Join(c.dir, "pwm"+v)
	switch file {
	case "export":
		if err := os.Mkdir(pwm, 0o755); err != nil {
			return // already exported: the kernel says EBUSY
		}
		now, later := []string{}, map[string]bool{}
		for _, f := range c.late {
			later[f] = true
		}
		for _, f := range []string{"period", "duty_cycle", "enable"} {
			if later[f] {
				continue
			}
			now = append(now, f)
		}
		for _, f := range now {
			must(c.t, os.WriteFile(filepath.Join(pwm, f), []byte("0\n"), 0o644))
		}
		if len(c.late) > 0 {
			c.lateDone = make(chan struct{})
			go c.handOver(pwm)
		}
	case "unexport":
		must(c.t, os.RemoveAll(pwm))
	}
}

// handOver makes the late files, each whole at once (rename), a little
// after the export: what ews finds depends on whether it waited for them.
func (c *fakeChip) handOver(pwm string) {
	defer close(c.lateDone)
	time.Sleep(20 * time.Millisecond) // udev's own pace, not a wait for a condition
	for _, f := range c.late {
		tmp := filepath.Join(c.dir, "."+f)
		if err := os.WriteFile(tmp, []byte("0\n"), 0o644); err != nil {
			c.t.Errorf("fake udev: %v", err)
			return
		}
		if err := os.Rename(tmp, filepath.Join(pwm, f)); err != nil {
			c.t.Errorf("fake udev: %v", err)
			return
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
