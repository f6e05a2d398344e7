package confstore

import (
	"context"
	"errors"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/durable/durabletest"
)

// A PUT naming the version another board just answered, on a board whose
// copy has not applied it yet, is no 412: that version is the current
// one. The board waits for its copy (at most behindWait) and writes, or
// answers ErrBehind (503) when its copy does not catch up. Found by
// TestLinearizable's history checker (docs/NOTES.md "Linearizability and
// the simulator"): 14 such 412s in 25 s, and 9 in 5 minutes from boards
// catching up after a restart once the wait was there.
func TestPutNamingAVersionThisCopyLacks(t *testing.T) {
	for _, c := range []struct {
		name    string
		release bool // the copy catches up while the PUT waits
		want    func(v Version, err error) bool
	}{
		{"the copy catches up: written", true, func(v Version, err error) bool { return err == nil && v.Number == 3 }},
		{"it does not: ErrBehind, not 412", false, func(v Version, err error) bool { return errors.Is(err, ErrBehind) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := durable.NewAlone(nil)
			lag := &durabletest.Lagging{Alone: log}
			b, err := New(Options{State: lag, Check: check})
			if err != nil {
				t.Fatal(err)
			}
			a := fixture(t, Options{State: log}) // seeds version 1: both copies take it
			lag.Hold()
			if v, err := a.Put(context.Background(), []byte(seed+"# two\n"), 1, "admin", ""); err != nil || v.Number != 2 {
				t.Fatalf("put on a: %v %v", v.Number, err)
			}
			if c.release {
				b.waiting = lag.Release // the copy catches up once the PUT waits for it
			}
			v, err := b.Put(context.Background(), []byte(seed+"# three\n"), 2, "admin", "")
			if !c.want(v, err) {
				t.Fatalf("put on b naming version 2: version %d, %v", v.Number, err)
			}
		})
	}
}
