package sdnotify

import "time"

// withNotifier replaces Systemd: tests record what would be sent.
func withNotifier(n Notifier) WatchdogOption { return func(w *Watchdog) { w.notify = n } }

// withInterval pets every d instead of half of $WATCHDOG_USEC.
func withInterval(d time.Duration) WatchdogOption { return func(w *Watchdog) { w.interval = d } }
