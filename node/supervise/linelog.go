package supervise

import (
	"bytes"
	"log/slog"
)

// maxLine caps one logged line of a helper's output.
const maxLine = 4096

// lineLog logs a helper's output one line at a time. Each stream has its
// own lineLog, written by one goroutine of os/exec.
type lineLog struct {
	log    *slog.Logger
	helper string
	stream string
	buf    []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLine - len(l.buf)
			if len(p) > room {
				l.buf = append(l.buf, p[:room]...)
				l.flush()
				p = p[room:]
				continue
			}
			l.buf = append(l.buf, p...)
			break
		}
		l.buf = append(l.buf, p[:i]...)
		l.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (l *lineLog) flush() {
	line := l.buf
	if len(line) > maxLine {
		line = line[:maxLine]
	}
	l.log.Info("supervise: output", "helper", l.helper, "stream", l.stream, "line", string(line))
	l.buf = l.buf[:0]
}

// rest logs an unterminated last line; call it after the writer's last Write.
func (l *lineLog) rest() {
	if len(l.buf) > 0 {
		l.flush()
	}
}
