package history

import (
	"context"

	"github.com/ews-firmware/ews/hal"
)

// Source is what Follow reads: hal.Devices.
type Source interface {
	Local() []hal.Snapshot
	IsLocal(name string) bool
	Watch(ctx context.Context, fn func(hal.Snapshot))
}

// Recorder records this board's devices into a Store.
type Recorder struct {
	devs Source
	st   *Store
}

// NewRecorder records devs into st once Run.
func NewRecorder(devs Source, st *Store) *Recorder { return &Recorder{devs: devs, st: st} }

// Run records the state of this board's devices now, then every change
// (sensors' polled values, outputs' on/off and duty, inputs' edges) until
// ctx ends, and returns nil. The caller owns the goroutine.
func (r *Recorder) Run(ctx context.Context) error {
	for _, s := range r.devs.Local() {
		RecordSnapshot(r.st, s)
	}
	r.devs.Watch(ctx, func(s hal.Snapshot) {
		if r.devs.IsLocal(s.Name) {
			RecordSnapshot(r.st, s)
		}
	})
	return nil
}

// RecordSnapshot records a device's state if it has a value to chart.
func RecordSnapshot(st *Store, s hal.Snapshot) {
	if v, ok := Value(s); ok {
		st.Record(s.Name, s.Unit, v)
	}
}

// Value is a snapshot's value as a number: a sensor's reading, a duty, or
// 1/0 for on/off; false for a device in error, not read yet, or whose
// value is not a number.
func Value(s hal.Snapshot) (float64, bool) {
	switch s.State {
	case hal.StateError, hal.StateUnknown, hal.StateRemote:
		return 0, false
	}
	return LastValue(s)
}

// LastValue is the value a snapshot holds whatever its state: a mirror
// marks a dead board's devices "error" but keeps their last value.
func LastValue(s hal.Snapshot) (float64, bool) {
	switch v := s.Value.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case nil:
		switch s.State {
		case hal.StateOn:
			return 1, true
		case hal.StateOff:
			return 0, true
		}
	}
	return 0, false
}
