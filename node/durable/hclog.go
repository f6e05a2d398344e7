package durable

import (
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// newHCLog is raft's logger writing into the board's: raft's warnings and
// errors only (its info lines are per election and per snapshot).
func newHCLog(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, DisableTime: true, Output: slogWriter{log}})
}

type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if strings.Contains(line, "[ERROR]") {
		w.log.Error(line)
	} else {
		w.log.Warn(line)
	}
	return len(p), nil
}
