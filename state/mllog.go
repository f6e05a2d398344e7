package state

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// mlLog turns memberlist's log lines ("[WARN] memberlist: ...") into slog
// records and counts the gossip it refused for want of the cluster key.
type mlLog struct {
	logger  *slog.Logger
	refused func(kind string)

	mu   sync.Mutex
	last map[string]time.Time // rate limit of repeated warnings, by text
}

// keyErrors are the texts memberlist logs for packets and streams that no
// installed key decrypts, or that arrive unencrypted while a key is set.
var keyErrors = []string{
	"installed keys could decrypt",
	"remote state is not encrypted",
	"remote state is encrypted and encryption is not configured",
	"decrypt",
}

func (l *mlLog) Write(p []byte) (int, error) {
	line := oneLine(string(bytes.TrimSpace(p)))
	level, msg := slog.LevelDebug, line
	for _, lv := range []struct {
		tag   string
		level slog.Level
	}{{"[ERR]", slog.LevelWarn}, {"[WARN]", slog.LevelWarn}, {"[INFO]", slog.LevelDebug}, {"[DEBUG]", slog.LevelDebug}} {
		if rest, ok := strings.CutPrefix(line, lv.tag); ok {
			level, msg = lv.level, strings.TrimSpace(rest)
			break
		}
	}
	lower := strings.ToLower(msg)
	for _, k := range keyErrors {
		if strings.Contains(lower, k) {
			l.refused("encrypted")
			if l.once("key") {
				l.logger.Warn("gossip refused: a board without our cluster key is talking to us", "memberlist", msg)
			}
			return len(p), nil
		}
	}
	if level >= slog.LevelWarn && !l.once(msg) {
		level = slog.LevelDebug
	}
	l.logger.Log(context.Background(), level, msg, "from", "memberlist")
	return len(p), nil
}

// once reports whether a warning keyed k was not logged in the last 30 s.
func (l *mlLog) once(k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]time.Time{}
	}
	now := time.Now()
	if t, ok := l.last[k]; ok && now.Sub(t) < 30*time.Second {
		return false
	}
	if len(l.last) > 256 {
		clear(l.last)
	}
	l.last[k] = now
	return true
}

// oneLine folds a multi-line memberlist text onto one log line. Its join
// errors are a multierror, "1 error occurred:\n\t* A\n\n": that reads
// "A"; with more errors, "2 errors occurred: A; B".
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var b strings.Builder
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*"))
		switch {
		case l == "":
			continue
		case b.Len() == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteByte(' ')
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return strings.TrimPrefix(strings.TrimPrefix(b.String(), "1 error occurred: "), "1 error occurred:")
}
