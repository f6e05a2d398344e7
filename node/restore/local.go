package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// LocalBoard names the board's own saved outputs in logs and steps.
const LocalBoard = "local"

// The board's own memory: each restorable output at its last command, kept
// in one small file under the state directory, so a board restarts into
// its outputs' states when no other board remembers them (the whole
// cluster lost power) and never goes back behind a command it executed
// while its peers could not hear it (a partition): the newest seq wins.

// LoadLocal reads the saved outputs; a missing file is nil, nil.
func LoadLocal(path string) ([]hal.Snapshot, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restore: read %s: %w", path, err)
	}
	var list []hal.Snapshot
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("restore: %s (damaged: ignored): %w", path, err)
	}
	return list, nil
}

// SaveLocal writes list whole: a temp file, fsynced, renamed over path.
func SaveLocal(path string, list []hal.Snapshot) error {
	b, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("restore: save outputs: %w", err)
	}
	_, werr := f.Write(b)
	serr := f.Sync()
	if cerr := f.Close(); werr == nil {
		werr = errors.Join(serr, cerr)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("restore: save outputs: %w", werr)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("restore: save outputs: %w", err)
	}
	return nil
}

// Watcher is what Keep follows: hal.Devices.
type Watcher interface {
	Restorable() []hal.Snapshot
	Watch(ctx context.Context, fn func(hal.Snapshot))
}

var _ Watcher = (*hal.Devices)(nil)

// Keep saves the restorable outputs that a command set (Seq > 0) to path
// after each change, at most once per every (default 1s: a card is not
// written for each toggle of a burst), and once more when ctx ends; now
// saves once at the start (after a restore). It returns when ctx ends.
func Keep(ctx context.Context, path string, devs Watcher, every time.Duration, now bool, log *slog.Logger) {
	if every <= 0 {
		every = time.Second
	}
	var dirty atomic.Bool
	dirty.Store(now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		devs.Watch(ctx, func(hal.Snapshot) { dirty.Store(true) })
	}()
	// What was saved last, by each output's command seq: a command that
	// ran before Watch subscribed (right at start) is seen here too.
	saved := ""
	save := func() {
		var list []hal.Snapshot
		var sig strings.Builder
		for _, s := range devs.Restorable() {
			if s.Seq > 0 {
				s.Error = ""
				list = append(list, s)
				fmt.Fprintf(&sig, "%s@%d;", s.Name, s.Seq)
			}
		}
		if !dirty.Swap(false) && sig.String() == saved {
			return
		}
		if err := SaveLocal(path, list); err != nil {
			log.Warn("restore: outputs not saved", "err", err)
			return
		}
		saved = sig.String()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			save()
			return
		case <-t.C:
			save()
		}
	}
}
