package sdnotify

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Watchdog tells systemd the node's lifecycle and pets its watchdog only
// while every probe passes. When a main loop hangs, the pets stop, systemd
// kills ews after WatchdogSec and Restart=on-failure starts it again.
//
// Create it with NewWatchdog, call Ready once serving, run Run in a goroutine
// owned by the node, and call Stopping when shutdown begins.
type Watchdog struct {
	log      *slog.Logger
	notify   Notifier
	probes   []Probe
	interval time.Duration   // 0: systemd wants no watchdog pets
	hung     []chan struct{} // per probe: closed when a call that overran returns; owned by Run
}

// WatchdogOption changes how NewWatchdog builds a Watchdog.
type WatchdogOption func(*Watchdog)

// NewWatchdog reads $WATCHDOG_USEC (and $WATCHDOG_PID) and plans a pet at
// half that interval, the spacing sd_watchdog_enabled(3) recommends.
func NewWatchdog(log *slog.Logger, probes []Probe, opts ...WatchdogOption) *Watchdog {
	if log == nil {
		log = slog.Default()
	}
	w := &Watchdog{log: log, notify: Systemd, probes: probes}
	if d, err := daemon.SdWatchdogEnabled(false); err != nil {
		log.Warn("sdnotify: ignoring bad watchdog settings from systemd", "err", err)
	} else {
		w.interval = d / 2
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Interval is the time between two pets; 0 when no watchdog is asked for.
func (w *Watchdog) Interval() time.Duration { return w.interval }

// Ready tells systemd that ews serves (READY=1); call it after the HTTP
// listener is open. It reports whether a service manager heard it.
func (w *Watchdog) Ready() bool {
	return send(w.notify, w.log, "READY=1\nSTATUS=serving")
}

// Stopping tells systemd that shutdown began (STOPPING=1).
func (w *Watchdog) Stopping() bool {
	return send(w.notify, w.log, "STOPPING=1\nSTATUS=stopping")
}

// Run pets the watchdog every Interval while all probes pass, until ctx is
// done, and returns nil. With no interval it returns at once. A failing probe is logged when
// it starts and stops failing, and the reason is put in the unit's STATUS.
func (w *Watchdog) Run(ctx context.Context) error {
	if w.interval <= 0 {
		return nil
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for _, p := range w.probes {
		if p.Every > 0 {
			urgentCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); w.urgent(urgentCtx, p) }()
			defer func() { stop(); <-done }()
		}
	}
	healthy := true
	for {
		err := w.round(ctx)
		switch {
		case err == nil:
			if !healthy {
				w.log.Info("sdnotify: all probes pass again; petting the watchdog")
				send(w.notify, w.log, "STATUS=serving")
			}
			send(w.notify, w.log, "WATCHDOG=1")
		case healthy:
			w.log.Error("sdnotify: probe failed; no more watchdog pets, systemd will restart ews unless it recovers", "err", err, "watchdog_sec", 2*w.interval)
			send(w.notify, w.log, "STATUS="+oneLine(err.Error()))
		}
		healthy = err == nil
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// urgent checks p every p.Every until ctx is done; at its first failure
// it asks systemd to restart ews now (WATCHDOG=trigger) and returns.
func (w *Watchdog) urgent(ctx context.Context, p Probe) {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, w.interval)
		err := call(pctx, p)
		cancel()
		if err != nil && ctx.Err() == nil {
			w.log.Error("sdnotify: probe failed for certain; asking systemd to restart ews now", "err", err)
			send(w.notify, w.log, "STATUS="+oneLine(err.Error()))
			send(w.notify, w.log, "WATCHDOG=trigger")
			return
		}
	}
}

// round runs every probe with a deadline of one interval; the first
// failure (or panic) is returned. A probe that ignores its deadline (blocked
// on a deadlocked mutex, say) counts as failing; it is left running and not
// started again until it returns, so a hung probe costs one goroutine.
func (w *Watchdog) round(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, w.interval)
	defer cancel()
	for i := range w.probes {
		if err := w.check(pctx, i); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (w *Watchdog) check(ctx context.Context, i int) error {
	p := w.probes[i]
	if w.hung == nil {
		w.hung = make([]chan struct{}, len(w.probes))
	}
	if h := w.hung[i]; h != nil {
		select {
		case <-h: // the hung call has returned at last
			w.hung[i] = nil
		default:
			return fmt.Errorf("sdnotify: probe %s: still hung from an earlier round", p.Name)
		}
	}
	res := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		res <- call(ctx, p)
	}()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		w.hung[i] = finished
		return fmt.Errorf("sdnotify: probe %s: no answer within %s", p.Name, w.interval)
	}
}

func call(ctx context.Context, p Probe) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sdnotify: probe %s panicked: %v\n%s", p.Name, r, debug.Stack())
		}
	}()
	if err := p.Check(ctx); err != nil {
		return fmt.Errorf("sdnotify: probe %s: %w", p.Name, err)
	}
	return nil
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
