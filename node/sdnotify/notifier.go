// Package sdnotify speaks systemd's notify protocol for ews run: READY, a health-gated WATCHDOG, STOPPING.
package sdnotify

import (
	"log/slog"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends one state line ("READY=1") to the service manager. It
// reports false with no error when there is no manager to tell ($NOTIFY_SOCKET
// unset), which is how ews runs outside systemd.
type Notifier func(state string) (sent bool, err error)

// Systemd is the Notifier over $NOTIFY_SOCKET (github.com/coreos/go-systemd/v22/daemon).
// It reads the variable at every call, so tests may set it at any time.
func Systemd(state string) (bool, error) { return daemon.SdNotify(false, state) }

// send notifies and logs a failure; systemd being absent is not a failure.
func send(n Notifier, log *slog.Logger, state string) bool {
	sent, err := n(state)
	if err != nil {
		log.Warn("sdnotify: cannot tell systemd", "state", state, "err", err)
		return false
	}
	return sent
}
