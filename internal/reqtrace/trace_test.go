package reqtrace

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestMarksRoundTrip(t *testing.T) {
	tr := &Trace{}
	ctx := With(context.Background(), tr)
	at := time.Unix(100, 5)
	tr.Mark(Enter, at)
	tr.Mark(Placed, at.Add(time.Millisecond))
	h := http.Header{}
	tr.Flush(h)
	tr.Mark(Run, at.Add(2*time.Millisecond))
	tr.Flush(h)
	tr.Flush(h) // nothing new: no empty value
	if n := len(h.Values(Header)); n != 2 {
		t.Fatalf("values = %d, want 2: %q", n, h.Values(Header))
	}
	got := Parse(h)
	want := map[string]time.Time{Enter: at, Placed: at.Add(time.Millisecond), Run: at.Add(2 * time.Millisecond)}
	if len(got) != len(want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for k, v := range want {
		if !got[k].Equal(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if From(ctx) != tr {
		t.Error("From lost the trace")
	}
	Mark(context.Background(), Lock) // no trace: nothing, no panic
}

func TestParseSkipsMalformed(t *testing.T) {
	h := http.Header{}
	h.Add(Header, "enter=12, =5,run,lock=x,done=-3,placed=7")
	got := Parse(h)
	if len(got) != 2 || got[Enter].UnixNano() != 12 || got[Placed].UnixNano() != 7 {
		t.Fatalf("Parse = %v, want enter and placed only", got)
	}
}

func TestAsked(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{{"1", true}, {"", false}, {"0", false}, {"yes", false}} {
		r, _ := http.NewRequest("GET", "/", nil)
		if tc.v != "" {
			r.Header.Set(Header, tc.v)
		}
		if got := Asked(r); got != tc.want {
			t.Errorf("Asked(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
