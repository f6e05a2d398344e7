// Package configtest is what the boot config's tests and its mapping's share: a valid file and the check that a problem is reported at its line.
package configtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// ValidCluster is a three-board cluster file, this board ews2, that every check passes.
const ValidCluster = `
[node]
name = "ews2"
capacity = 2

[cluster]
peers = ["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946", "ews3=10.0.0.13:7946"]
key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
tmax = "300ms"

[[device]]
name = "relay1"
driver = "gpio-out"
pin = "GPIO17"
`

// Want is one problem a test expects: its line, its key, and words its message holds.
type Want struct {
	Line     int
	Key, Msg string
}

// Refused fails t unless err is config.Errors holding a problem for w.Key
// whose message holds w.Msg, written at file:w.Line and printed so; it
// returns that problem.
func Refused(t testing.TB, err error, file string, w Want) *config.Error {
	t.Helper()
	var es config.Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("error %T %v is not config.Errors (nil: the file was accepted)", err, err)
	}
	for _, e := range es {
		if e.Key != w.Key || !strings.Contains(e.Msg, w.Msg) {
			continue
		}
		if e.File != file || e.Line != w.Line {
			t.Fatalf("error at %s:%d, want %s:%d (%v)", e.File, e.Line, file, w.Line, e)
		}
		if want := "config: " + file + ":"; !strings.HasPrefix(e.Error(), want) {
			t.Fatalf("message %q does not start with %q", e.Error(), want)
		}
		return e
	}
	t.Fatalf("no error for key %q with %q in:\n%v", w.Key, w.Msg, err)
	return nil
}

// Problems fails t unless errs are want, one for one and in line order.
func Problems(t testing.TB, errs config.Errors, want []Want) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if e := errs[i]; e.Line != w.Line || e.Key != w.Key || !strings.Contains(e.Msg, w.Msg) {
			t.Errorf("problem %d = %v, want line %d %s: %s", i+1, e, w.Line, w.Key, w.Msg)
		}
	}
}
