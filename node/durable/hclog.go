package durable

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// newHCLog is raft's logger writing into the board's: raft's warnings and
// errors only (its info lines are per election and per snapshot), each
// kind of line at most once per logEvery, since raft repeats a failed
// heartbeat to a board that is down at every backoff.
func newHCLog(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, DisableTime: true,
		Output: &slogWriter{log: log, last: map[string]time.Time{}}})
}

const logEvery = 10 * time.Second

type slogWriter struct {
	log  *slog.Logger
	mu   sync.Mutex
	last map[string]time.Time // a line's text before its first field -> when last logged
}

func (w *slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	key, _, _ := strings.Cut(line, "=")
	now := time.Now()
	w.mu.Lock()
	if t, ok := w.last[key]; ok && now.Sub(t) < logEvery {
		w.mu.Unlock()
		return len(p), nil
	}
	w.last[key] = now
	w.mu.Unlock()
	w.log.Warn(strings.TrimPrefix(strings.TrimPrefix(line, "[ERROR] "), "[WARN]  "))
	return len(p), nil
}
