package main

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node"
	"github.com/ews-firmware/ews/node/firmware"
)

// Firmware slots (node/firmware/slots.go): on a board whose binary cannot
// be replaced in place (the packaged /usr/bin/ews under
// ProtectSystem=strict), uploads go to A/B slots under the state
// directory. The packaged binary hands over to the active slot at start;
// a trial commits itself once it serves.

// launchSlot runs, in the packaged binary, the slot Choose picks, replacing
// this process (same PID: systemd's notify and watchdog follow). It
// returns when this binary is the one to run (or the exec failed).
func launchSlot(exe string, pub ed25519.PublicKey, log *slog.Logger) {
	path := slotToRun(exe, pub, log)
	if path == "" {
		return
	}
	err := syscall.Exec(path, append([]string{path}, os.Args[1:]...), os.Environ())
	log.Error("firmware: cannot start the slot binary; running the packaged one", "path", path, "err", err)
}

// slotToRun is the slot binary the packaged binary exe hands over to, ""
// for itself. A slot whose signature does not verify against pub (the
// cluster's firmware key) is not run: the slots are the service user's
// files, so anything running as it could plant one that would persist
// (docs/NOTES.md "Security"); the packaged binary runs instead, and says so.
func slotToRun(exe string, pub ed25519.PublicKey, log *slog.Logger) string {
	s, ok := firmware.SlotsFor(exe)
	if !ok || exe != s.Base {
		return ""
	}
	path, trial, note, err := s.Choose(time.Now())
	if err != nil {
		log.Warn("firmware slots: "+err.Error(), "dir", s.Dir)
	}
	if note != "" {
		log.Warn("firmware: "+note, "dir", s.Dir)
	}
	if path == exe {
		return ""
	}
	if _, err := firmware.VerifyFile(path, pub); err != nil {
		log.Error("firmware: the slot binary is not signed by this cluster's key; running the packaged one", "path", path, "err", err)
		return ""
	}
	log.Info("firmware: starting the slot binary", "path", path, "trial", trial)
	return path
}

// firmwareKey is the verify key of the board bundle cfg names; nil
// without one (then no slot runs: none could have been installed).
func firmwareKey(cfg *config.Config) ed25519.PublicKey {
	if cfg.Cluster.BundleFile == "" {
		return nil
	}
	b, err := bundle.Read(cfg.Cluster.BundleFile)
	if err != nil {
		return nil
	}
	pub, _ := b.Verifier()
	return pub
}

// commitTrial, in a slot binary on trial, commits it once the node is
// ready; not ready within node.ReadyWithin, it calls fail (the process
// exits non-zero, the service manager starts the packaged binary again,
// which rolls the trial back).
func commitTrial(ctx context.Context, exe string, n *node.Node, log *slog.Logger, fail func()) {
	s, ok := firmware.SlotsFor(exe)
	if !ok || exe == s.Base {
		return
	}
	if _, pending := s.Pending(); !pending {
		return
	}
	go func() {
		deadline := time.NewTimer(node.ReadyWithin)
		defer deadline.Stop()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-deadline.C:
				log.Error("firmware: the new binary is not ready in time; stopping so the previous one runs again", "within", node.ReadyWithin)
				fail()
				return
			case <-tick.C:
				if !n.Ready() {
					continue
				}
				if ok, err := s.CommitTrial(exe, time.Now()); err != nil {
					log.Error("firmware: commit the upgrade", "err", err)
				} else if ok {
					log.Info("firmware: upgrade committed", "slot", exe)
				}
				return
			}
		}
	}()
}

// slotComeBack is how a board that upgrades through slots comes back from
// a restart or an upload: through the packaged binary, which picks the
// slot. Under a service manager it exits for a restart; hand-run, it
// execs the packaged binary (a failed trial is then rolled back at the
// next start, not at once: nothing restarts a binary that exits).
func slotComeBack(exe, handoff string, log *slog.Logger) (int, bool) {
	s, ok := firmware.SlotsFor(exe)
	if !ok {
		return 0, false
	}
	if os.Getenv("INVOCATION_ID") != "" || os.Getenv("NOTIFY_SOCKET") != "" || os.Getenv(node.EnvSupervised) == "1" {
		return node.ExitCodeRestart, true
	}
	env := os.Environ()
	if handoff != "" {
		env = append(env, handoff) // the next process keeps this board's sessions
	}
	log.Info("restarting through the packaged binary", "exe", s.Base)
	err := syscall.Exec(s.Base, append([]string{s.Base}, os.Args[1:]...), env)
	log.Error("restart: exec the packaged binary", "exe", s.Base, "err", err)
	return node.ExitCodeRestart, true
}
