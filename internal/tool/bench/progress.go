package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressWidth is the number of cells of the bar.
const progressWidth = 24

// renderProgress draws one line of the progress bar (starting with \r, no newline) for a run
// that is frac done (clamped to [0, 1]) with the given counters.
func renderProgress(frac float64, elapsed time.Duration, sent, ok, shed, errs, lost, inflight int64) string {
	frac = min(max(frac, 0), 1)
	fill := int(frac * progressWidth)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", progressWidth-fill)
	return fmt.Sprintf("\r[%s] %3.0f%% %5.1fs sent %d ok %d shed %d err %d lost %d in-flight %d \x1b[K",
		bar, frac*100, elapsed.Seconds(), sent, ok, shed, errs, lost, inflight)
}

// startProgress draws the bar on cfg.Progress every progressEvery until the returned stop is
// called; stop clears the line. Without cfg.Progress it does nothing.
func (r *runner) startProgress() (stop func()) {
	w := r.cfg.Progress
	if w == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("bench: progress bar panicked", "panic", p)
			}
		}()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				_, _ = io.WriteString(w, "\r\x1b[K")
				return
			case <-t.C:
				_, _ = io.WriteString(w, r.progressLine())
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

func (r *runner) progressLine() string {
	el := time.Since(r.start)
	frac := el.Seconds() / r.cfg.Duration.Seconds()
	var due, sent, ok, shed, errs, lost int64
	for _, st := range r.stats {
		due += st.due.Load()
		sent += st.sent.Load()
		ok += st.ok.Load()
		shed += st.shed.Load()
		errs += st.errs.Load()
		lost += st.overflow.Load() + st.unsent.Load()
	}
	if r.cfg.Max > 0 {
		frac = max(frac, float64(due)/float64(r.cfg.Max))
	}
	return renderProgress(frac, el, sent, ok, shed, errs, lost, r.inflight.Load())
}
