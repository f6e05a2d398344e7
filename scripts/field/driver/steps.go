package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A step checks one thing from outside and returns its figure.
type step func(ctx context.Context, f *field) (string, error)

var stepsByName = map[string]step{
	"cluster":   stepCluster,
	"toggle":    stepToggle,
	"journal":   stepJournal,
	"watchdog":  stepWatchdog,
	"upgrade":   stepUpgrade,
	"rollback":  stepRollback,
	"takeover":  stepTakeover,
	"power-cut": stepPowerCut,
	"rebuild":   stepRebuild,
}

// relay is the gpio-out device each board drives on the PL061's line GPIO4
// (scripts/field.sh writes it into the boot configs).
func relay(b *board) string { return "relay" + strings.TrimPrefix(b.name, "ews") }

// agreed waits until every board in bs answers /api/cluster with the same
// master (not "" and not in exclude) and every one of want running.
func (f *field) agreed(ctx context.Context, bs []*board, want []*board, exclude string, d time.Duration) (string, error) {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var master string
	err := poll(c, 500*time.Millisecond, func(ctx context.Context) error {
		master = ""
		for _, b := range bs {
			var v clusterView
			if err := f.api.getJSON(ctx, b, "/api/cluster", &v); err != nil {
				return err
			}
			if v.Master == "" || v.Master == exclude {
				return fmt.Errorf("%s sees master %q", b.name, v.Master)
			}
			if master != "" && v.Master != master {
				return fmt.Errorf("%s sees master %s, another %s", b.name, v.Master, master)
			}
			master = v.Master
			run := map[string]bool{}
			for _, n := range v.Nodes {
				run[n.Name] = n.Runstate == "running"
			}
			for _, w := range want {
				if !run[w.name] {
					return fmt.Errorf("%s does not see %s running", b.name, w.name)
				}
			}
		}
		return nil
	})
	return master, err
}

func stepCluster(ctx context.Context, f *field) (string, error) {
	t := time.Now()
	m, err := f.agreed(ctx, f.boards, f.boards, "", 5*time.Minute)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("master=%s boards=%d agreed_after_serving_s=%.1f", m, len(f.boards), time.Since(t).Seconds()), nil
}

// level is the kernel's view of line GPIO4 on b (gpiolib's debugfs): "hi" or "lo".
func level(ctx context.Context, b *board) (string, error) {
	out, rc, err := b.sh(ctx, 20*time.Second, "grep -F '(GPIO4 ' /sys/kernel/debug/gpio")
	if err != nil || rc != 0 {
		return "", fmt.Errorf("%s: debugfs gpio: rc %d %v %s", b.name, rc, err, out)
	}
	switch {
	case strings.Contains(out, "out hi"):
		return "hi", nil
	case strings.Contains(out, "out lo"):
		return "lo", nil
	}
	return "", fmt.Errorf("%s: GPIO4 not an output: %s", b.name, strings.TrimSpace(out))
}

// command posts an action for dev through via, and waits until the kernel
// line on owner is want.
func (f *field) command(ctx context.Context, via, owner *board, dev, action, want string) error {
	code, body, err := f.api.do(ctx, "POST", via, "/api/devices/"+dev+"/"+action)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("POST %s/%s via %s: %d %s", dev, action, via.name, code, strings.TrimSpace(string(body)))
	}
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll(c, 200*time.Millisecond, func(ctx context.Context) error {
		l, err := level(ctx, owner)
		if err != nil {
			return err
		}
		if l != want {
			return fmt.Errorf("%s GPIO4 %s, want %s", owner.name, l, want)
		}
		return nil
	})
}

func stepToggle(ctx context.Context, f *field) (string, error) {
	owner, via := f.boards[1], f.boards[len(f.boards)-1]
	before, err := level(ctx, owner)
	if err != nil {
		return "", err
	}
	want := map[string]string{"hi": "lo", "lo": "hi"}[before]
	t := time.Now()
	if err := f.command(ctx, via, owner, relay(owner), "toggle", want); err != nil {
		return "", err
	}
	d := time.Since(t)
	var dv deviceView
	if err := f.api.getJSON(ctx, f.boards[0], "/api/devices/"+relay(owner), &dv); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s on %s via %s: kernel GPIO4 %s->%s in %dms, state %s seen on %s", relay(owner), owner.name, via.name, before, want, d.Milliseconds(), dv.State, f.boards[0].name), nil
}

// errorLines counts ERROR lines of ews in b's journal since its boot.
func errorLines(ctx context.Context, b *board) (int, string, error) {
	out, _, err := b.sh(ctx, 60*time.Second, "journalctl -b -u ews --no-pager -o cat | grep -E 'level=ERROR|\"level\":\"ERROR\"' | head -5")
	if err != nil {
		return 0, "", err
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return 0, "", nil
	}
	return len(strings.Split(out, "\n")), out, nil
}

func stepJournal(ctx context.Context, f *field) (string, error) {
	var seen []string
	for _, b := range f.boards {
		n, lines, err := errorLines(ctx, b)
		if err != nil {
			return "", err
		}
		if n > 0 {
			return "", fmt.Errorf("%s: %d ERROR lines in journalctl -u ews: %s", b.name, n, lines)
		}
		out, _, _ := b.sh(ctx, 60*time.Second, "journalctl -b -u ews --no-pager -o cat | wc -l")
		seen = append(seen, b.name+"="+strings.TrimSpace(out))
	}
	return "no ERROR in journalctl -u ews since boot (lines: " + strings.Join(seen, " ") + ")", nil
}

func mainPID(ctx context.Context, b *board) (string, error) {
	out, rc, err := b.sh(ctx, 20*time.Second, "systemctl show -p MainPID --value ews")
	if err != nil || rc != 0 {
		return "", fmt.Errorf("%s: systemctl show: %v %s", b.name, err, out)
	}
	return strings.TrimSpace(out), nil
}

// serving waits until b's /readyz answers 200.
func (f *field) serving(ctx context.Context, b *board, d time.Duration) error {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return poll(c, 300*time.Millisecond, func(ctx context.Context) error {
		code, _, err := f.api.do(ctx, "GET", b, "/readyz")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("%s /readyz %d", b.name, code)
		}
		return nil
	})
}

func stepWatchdog(ctx context.Context, f *field) (string, error) {
	b := f.boards[1]
	pid, err := mainPID(ctx, b)
	if err != nil {
		return "", err
	}
	if out, rc, err := b.sh(ctx, 20*time.Second, "systemctl kill -s STOP ews"); err != nil || rc != 0 {
		return "", fmt.Errorf("systemctl kill: %v %s", err, out)
	}
	t := time.Now()
	c, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var np string
	err = poll(c, 500*time.Millisecond, func(ctx context.Context) error {
		p, err := mainPID(ctx, b)
		if err != nil {
			return err
		}
		if p == pid || p == "0" {
			return fmt.Errorf("MainPID %s", p)
		}
		np = p
		return f.serving(ctx, b, 15*time.Second)
	})
	if err != nil {
		return "", err
	}
	d := time.Since(t)
	out, _, _ := b.sh(ctx, 30*time.Second, "journalctl -b -u ews --no-pager -o cat | grep -ci 'watchdog timeout'")
	if strings.TrimSpace(out) == "0" || strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("%s restarted (pid %s->%s) but the journal shows no watchdog timeout", b.name, pid, np)
	}
	wd, _, _ := b.sh(ctx, 20*time.Second, "systemctl show -p WatchdogUSec --value ews")
	return fmt.Sprintf("%s stopped (SIGSTOP) -> systemd watchdog -> serving again in %.1fs (WatchdogSec=%s; pid %s->%s)", b.name, d.Seconds(), strings.TrimSpace(wd), pid, np), nil
}

// ewsCLI runs the host's ews with args, bounded by d.
func (f *field) ewsCLI(ctx context.Context, d time.Duration, args ...string) (string, error) {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	out, err := exec.CommandContext(c, f.ews, args...).CombinedOutput()
	return string(out), err
}

func (f *field) versions(ctx context.Context) (map[string]boardView, error) {
	vs := map[string]boardView{}
	for _, b := range f.boards {
		var v boardView
		if err := f.api.getJSON(ctx, b, "/api/board", &v); err != nil {
			return nil, err
		}
		vs[b.name] = v
	}
	return vs, nil
}

func stepUpgrade(ctx context.Context, f *field) (string, error) {
	if f.upgrade == "" {
		return "", errors.New("no --upgrade build")
	}
	t := time.Now()
	out, err := f.ewsCLI(ctx, 30*time.Minute, "upgrade", "--url", url(f.boards[0], ""), "--binary", f.upgrade,
		"--token-file", f.tokenFile, "--cacert", f.ca, "--timeout", "10m")
	if err != nil {
		return "", fmt.Errorf("ews upgrade: %v: %s", err, out)
	}
	d := time.Since(t)
	vs, err := f.versions(ctx)
	if err != nil {
		return "", err
	}
	for n, v := range vs {
		if v.Version != f.upgradeVersion {
			return "", fmt.Errorf("%s runs %s after the upgrade, want %s", n, v.Version, f.upgradeVersion)
		}
	}
	// the packaged binary stays as flashed; the slot runs (read-only /usr/bin/ews)
	b := f.boards[0]
	slots, rc, err := b.sh(ctx, 20*time.Second, "cat /var/lib/ews/firmware/slots.json")
	if err != nil || rc != 0 {
		return "", fmt.Errorf("%s: no slots.json: %v %s", b.name, err, slots)
	}
	ver, _, _ := b.sh(ctx, 60*time.Second, "/usr/bin/ews version | head -1")
	if _, err := f.agreed(ctx, f.boards, f.boards, "", 3*time.Minute); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d boards to %s in %.0fs (followers first, master last); %s: /usr/bin/ews still %q, slots %s", len(f.boards), f.upgradeVersion, d.Seconds(), b.name, strings.TrimSpace(ver), strings.TrimSpace(slots)), nil
}

func stepRollback(ctx context.Context, f *field) (string, error) {
	if f.broken == "" {
		return "", errors.New("no --broken build")
	}
	before, err := f.versions(ctx)
	if err != nil {
		return "", err
	}
	t := time.Now()
	out, err := f.ewsCLI(ctx, 30*time.Minute, "upgrade", "--url", url(f.boards[0], ""), "--binary", f.broken,
		"--token-file", f.tokenFile, "--cacert", f.ca, "--timeout", "5m")
	if err == nil {
		return "", fmt.Errorf("ews upgrade with a broken build exited 0: %s", out)
	}
	d := time.Since(t)
	if err := f.serving(ctx, f.boards[0], 3*time.Minute); err != nil {
		return "", err
	}
	var after map[string]boardView
	c, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	err = poll(c, time.Second, func(ctx context.Context) error {
		var err error
		if after, err = f.versions(ctx); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	var rolled []string
	for n, v := range after {
		if v.Version != before[n].Version {
			return "", fmt.Errorf("%s runs %s after the broken upgrade, was %s", n, v.Version, before[n].Version)
		}
		if v.Upgrade != nil && strings.Contains(v.Upgrade.Outcome, "roll") {
			rolled = append(rolled, n+":"+v.Upgrade.Outcome)
		}
	}
	if len(rolled) == 0 {
		return "", fmt.Errorf("no board reports a rolled back upgrade; ews upgrade said: %s", lastLine(out))
	}
	return fmt.Sprintf("broken signed build refused by the slot logic in %.0fs: %s; every board still on its version; ews upgrade: %s", d.Seconds(), strings.Join(rolled, ","), lastLine(out)), nil
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

func stepTakeover(ctx context.Context, f *field) (string, error) {
	m, err := f.agreed(ctx, f.boards, f.boards, "", 3*time.Minute)
	if err != nil {
		return "", err
	}
	mb := f.byName(m)
	var rest []*board
	for _, b := range f.boards {
		if b != mb {
			rest = append(rest, b)
		}
	}
	mb.kill()
	t := time.Now()
	nm, err := f.agreed(ctx, rest, rest, m, 3*time.Minute)
	if err != nil {
		return "", err
	}
	d := time.Since(t)
	// the old master boots again and joins under the new one
	if _, err := f.bootOne(ctx, mb); err != nil {
		return "", err
	}
	back, err := f.agreed(ctx, f.boards, f.boards, "", 5*time.Minute)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("qemu of master %s killed -> %s master in %.1fs; %s booted again, master now %s", m, nm, d.Seconds(), m, back), nil
}

func stepPowerCut(ctx context.Context, f *field) (string, error) {
	b := f.boards[1]
	dev := relay(b)
	// commands, each a history point on b; the last turns it on; the power
	// goes while b appends them ([history] flush = "1s")
	for i, a := range []string{"turn_off", "turn_on", "turn_off", "turn_on"} {
		want := map[int]string{0: "lo", 1: "hi", 2: "lo", 3: "hi"}[i]
		if err := f.command(ctx, f.boards[0], b, dev, a, want); err != nil {
			return "", err
		}
	}
	var before struct {
		Points []any `json:"points"`
	}
	if err := f.api.getJSON(ctx, f.boards[0], "/api/devices/"+dev+"/history?since=1h", &before); err != nil {
		return "", err
	}
	b.kill()
	t := time.Now()
	if _, err := f.bootOne(ctx, b); err != nil {
		return "", err
	}
	boot := time.Since(t)
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var l string
	err := poll(c, 500*time.Millisecond, func(ctx context.Context) error {
		var err error
		if l, err = level(ctx, b); err != nil {
			return err
		}
		if l != "hi" {
			return fmt.Errorf("GPIO4 %s after the power cut, want hi (restore = last)", l)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	var after struct {
		Points []any `json:"points"`
	}
	if err := f.api.getJSON(ctx, b, "/api/devices/"+dev+"/history?since=1h", &after); err != nil {
		return "", fmt.Errorf("history after the power cut: %w", err)
	}
	if len(after.Points) == 0 {
		return "", fmt.Errorf("history of %s empty after the power cut (%d points before)", dev, len(before.Points))
	}
	warn, _, _ := b.sh(ctx, 60*time.Second, "journalctl -b -u ews --no-pager -o cat | grep -ci 'history' ")
	return fmt.Sprintf("%s cut mid-writes, back serving in %.0fs: %s restored on (kernel: GPIO4 hi), history %d points (%d before the cut), %s journal history lines", b.name, boot.Seconds(), dev, len(after.Points), len(before.Points), strings.TrimSpace(warn)), nil
}

func stepRebuild(ctx context.Context, f *field) (string, error) {
	if f.rebuild == "" {
		return "", errors.New("no --rebuild command")
	}
	b := f.boards[len(f.boards)-1]
	dev := relay(b)
	if err := f.command(ctx, f.boards[0], b, dev, "turn_on", "hi"); err != nil {
		return "", err
	}
	backup := filepath.Join(f.work, "cluster.tar.gz")
	_ = os.Remove(backup)
	if out, err := f.ewsCLI(ctx, 5*time.Minute, "cluster", "backup", "--url", url(f.boards[0], ""), "--token-file", f.tokenFile,
		"--cacert", f.ca, "--out", backup); err != nil {
		return "", fmt.Errorf("ews cluster backup: %v: %s", err, out)
	}
	b.kill() // the card died
	if err := os.Remove(b.img); err != nil {
		return "", err
	}
	c, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(c, "bash", "-c", f.rebuild+" --from-backup "+backup).CombinedOutput(); err != nil {
		return "", fmt.Errorf("rebuilding %s's card: %v: %s", b.name, err, out)
	}
	t := time.Now()
	if _, err := f.bootOne(ctx, b); err != nil {
		return "", err
	}
	if _, err := f.agreed(ctx, f.boards, f.boards, "", 5*time.Minute); err != nil {
		return "", err
	}
	d := time.Since(t)
	var v boardView
	if err := f.api.getJSON(ctx, b, "/api/board", &v); err != nil {
		return "", err
	}
	if v.Name != b.name {
		return "", fmt.Errorf("the rebuilt board calls itself %q", v.Name)
	}
	c2, cancel2 := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel2()
	err := poll(c2, 500*time.Millisecond, func(ctx context.Context) error {
		l, err := level(ctx, b)
		if err != nil {
			return err
		}
		if l != "hi" {
			return fmt.Errorf("%s GPIO4 %s on the rebuilt board, want hi", dev, l)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("backup from the host, %s's card rebuilt with flash.sh --from-backup: rejoined as %s in %.0fs from power on, %s back on (kernel: GPIO4 hi)", b.name, v.Name, d.Seconds(), dev), nil
}
