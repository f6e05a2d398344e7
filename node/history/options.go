package history

import (
	"log/slog"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// Options configure a Store; zero fields take the defaults of DefaultOptions.
type Options struct {
	// Dir holds the history file (history.log); it is created when
	// missing. Empty: the history is kept in memory only.
	Dir string
	// Flush is how often recorded points go to the card, in one append;
	// a crash loses at most this window. Default 5m: an SD card lives
	// longer with few large writes than with many small ones.
	Flush time.Duration
	// Full is how long points are kept at full resolution. Default 24h.
	Full time.Duration
	// Keep is how long the downsampled points (min/mean/max per
	// Resolution) are kept. Default 720h (30 days).
	Keep time.Duration
	// Resolution is the bucket of the downsampled points. Default 1m.
	Resolution time.Duration
	// MaxBytes caps the history file; when the points kept would not fit,
	// the oldest go first. Default 32 MiB: a month of 10 sensors at 5 s is
	// about 15 MiB, and a Pi Zero's card has gigabytes.
	MaxBytes int64
	// Now is the clock; nil is time.Now. Tests pass a fake one.
	Now func() time.Time
	// Registerer receives the history metrics; nil registers none.
	Registerer *promx.Registry
	Logger     *slog.Logger

	noSync bool // tests: skip fsync (a month of flushes on a fake clock)
}

// DefaultOptions are the values a zero field of Options takes.
func DefaultOptions() Options {
	return Options{
		Flush:      5 * time.Minute,     // the card sees one write per 5 minutes
		Full:       24 * time.Hour,      // a day at the rate it was read
		Keep:       30 * 24 * time.Hour, // a month of 1-minute min/mean/max
		Resolution: time.Minute,
		MaxBytes:   32 << 20,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Flush <= 0 {
		o.Flush = d.Flush
	}
	if o.Full <= 0 {
		o.Full = d.Full
	}
	if o.Keep <= 0 {
		o.Keep = d.Keep
	}
	if o.Resolution <= 0 {
		o.Resolution = d.Resolution
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = d.MaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
