// Command driver runs the field test's boards and checks them from outside (scripts/field.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// field is the run: the boards, the client, what the steps need.
type field struct {
	boards         []*board
	api            *api
	kernel, initrd string
	dtb            string // the virt machine's, its GPIO lines named
	ews            string // the host's ews: upgrade, backup
	ca, tokenFile  string
	upgrade        string // a signed new build, its version
	upgradeVersion string
	broken         string // a signed build that does not serve
	rebuild        string // shell command that rebuilds the last board's image; --from-backup FILE is appended
	work           string
	bootTimeout    time.Duration
	failed         bool
}

func main() {
	f := &field{}
	names := flag.String("boards", "ews1=10.77.0.11,ews2=10.77.0.12,ews3=10.77.0.13", "name=addr,... (images NAME.img in --work, taps ews-tapN)")
	flag.StringVar(&f.work, "work", "", "directory of the images; sockets and console logs go there")
	flag.StringVar(&f.kernel, "kernel", "", "Debian's arm64 vmlinuz")
	flag.StringVar(&f.initrd, "initrd", "", "its initramfs")
	flag.StringVar(&f.ca, "cacert", "", "the cluster's CA (ews cluster ca)")
	flag.StringVar(&f.tokenFile, "token-file", "", "the API token")
	flag.StringVar(&f.ews, "ews", "", "an ews for this machine")
	flag.StringVar(&f.upgrade, "upgrade", "", "a signed new arm64 build")
	flag.StringVar(&f.upgradeVersion, "upgrade-version", "", "its version")
	flag.StringVar(&f.broken, "broken", "", "a signed arm64 build that does not serve")
	flag.StringVar(&f.rebuild, "rebuild", "", "command rebuilding the last board's image (--from-backup FILE appended)")
	steps := flag.String("steps", "cluster,toggle,journal,watchdog,upgrade,rollback,takeover,power-cut,rebuild", "steps to run, in this order")
	timeout := flag.Duration("timeout", 50*time.Minute, "the whole run")
	flag.DurationVar(&f.bootTimeout, "boot-timeout", 15*time.Minute, "one boot, power on to serving (TCG is slow)")
	flag.Parse()
	for i, nv := range strings.Split(*names, ",") {
		name, addr, _ := strings.Cut(nv, "=")
		dir := filepath.Join(f.work, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fatal(err)
		}
		f.boards = append(f.boards, &board{name: name, addr: addr, tap: fmt.Sprintf("ews-tap%d", i+1),
			mac: fmt.Sprintf("52:54:00:77:00:%02x", i+1), img: filepath.Join(f.work, name+".img"), dir: dir})
	}
	a, err := newAPI(f.ca, f.tokenFile)
	if err != nil {
		fatal(err)
	}
	f.api = a
	for _, s := range strings.Split(*steps, ",") {
		if _, ok := stepsByName[s]; !ok {
			fatal(fmt.Errorf("field: unknown step %q", s))
		}
	}
	// SIGINT/SIGTERM end the run; the boards are powered off either way
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	code := f.run(ctx, strings.Split(*steps, ","))
	for _, b := range f.boards {
		b.kill()
	}
	os.Exit(code)
}

// run boots the boards and runs the steps; the exit code.
func (f *field) run(ctx context.Context, steps []string) int {
	f.dtb = filepath.Join(f.work, "virt.dtb")
	if err := dumpDTB(f.boards[0], f.kernel, f.initrd, f.dtb); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := f.bootAll(ctx); err != nil {
		f.fail("boot", err)
		f.consoles()
		return 1
	}
	for _, s := range steps {
		step := stepsByName[s]
		if ctx.Err() != nil {
			fmt.Printf("field: out of time before %s\n", s)
			f.failed = true
			break
		}
		figure, err := step(ctx, f)
		if err != nil {
			f.fail(s, err)
			continue
		}
		fmt.Printf("FIELD PASS %s %s\n", s, figure)
	}
	if f.failed {
		f.consoles()
		return 1
	}
	return 0
}

func (f *field) fail(name string, err error) {
	f.failed = true
	fmt.Printf("FIELD FAIL %s %s\n", name, strings.ReplaceAll(err.Error(), "\n", " | "))
}

// consoles prints the tail of each board's console, for a failed run.
func (f *field) consoles() {
	for _, b := range f.boards {
		data, _ := os.ReadFile(filepath.Join(b.dir, "console.log"))
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 25 {
			lines = lines[len(lines)-25:]
		}
		fmt.Fprintf(os.Stderr, "field: %s: console (%s):\n  %s\n", b.name, filepath.Join(b.dir, "console.log"), strings.Join(lines, "\n  "))
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

// bootAll powers every board on at once and waits until each serves.
func (f *field) bootAll(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(f.boards))
	secs := make([]string, len(f.boards))
	for i, b := range f.boards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.bootOne(ctx, b)
			errs[i] = err
			secs[i] = fmt.Sprintf("%s=%.0fs", b.name, d.Seconds())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Printf("FIELD TIME boot-to-serving %s (TCG, power on to HTTPS /readyz 200)\n", strings.Join(secs, " "))
	return nil
}

// bootOne powers b on and waits for HTTPS /readyz and the agent.
func (f *field) bootOne(ctx context.Context, b *board) (time.Duration, error) {
	if err := b.boot(f.kernel, f.initrd, f.dtb); err != nil {
		return 0, err
	}
	c, cancel := context.WithTimeout(ctx, f.bootTimeout)
	defer cancel()
	err := poll(c, time.Second, func(ctx context.Context) error {
		select {
		case <-b.exited:
			return fmt.Errorf("qemu exited")
		default:
		}
		code, body, err := f.api.do(ctx, "GET", b, "/readyz")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	d := time.Since(b.started)
	if err != nil {
		return d, fmt.Errorf("%s not serving %.0fs after power on: %w", b.name, d.Seconds(), err)
	}
	if err := b.waitAgent(c); err != nil {
		return d, err
	}
	return d, nil
}

func (f *field) byName(name string) *board {
	for _, b := range f.boards {
		if b.name == name {
			return b
		}
	}
	return nil
}
