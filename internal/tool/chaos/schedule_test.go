package chaos

import (
	"reflect"
	"testing"
	"time"
)

func TestScript(t *testing.T) {
	s := Script(time.Second, 2*time.Second)
	if len(s) != len(Kinds()) {
		t.Fatalf("%d faults, want one of each of %d kinds", len(s), len(Kinds()))
	}
	for i, f := range s {
		if f.Kind != Kinds()[i] || f.Gap != 2*time.Second {
			t.Errorf("fault %d = %+v", i, f)
		}
		if f.Kind.OnMaster() && f.Kind != SlowLink && f.Hold <= time.Second {
			t.Errorf("%s held %v: a fault of the master must outlast tmax", f.Kind, f.Hold)
		}
	}
}

func TestRandom(t *testing.T) {
	a, b, c := Random(7, 60, time.Second, time.Second), Random(7, 60, time.Second, time.Second), Random(8, 60, time.Second, time.Second)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("two seeds gave one schedule")
	}
	kinds := map[Kind]int{}
	for _, f := range a {
		kinds[f.Kind]++
		base := holdOf(f.Kind, time.Second)
		if f.Hold < base || f.Hold >= 2*base || f.Gap < time.Second || f.Gap > 2*time.Second {
			t.Errorf("fault %+v out of its ranges", f)
		}
	}
	if len(kinds) != len(Kinds()) {
		t.Errorf("60 faults drew kinds %v, want all %d", kinds, len(Kinds()))
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("flood"); err == nil {
		t.Error("ParseKind(flood): no error")
	}
}
