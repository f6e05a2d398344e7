package logring

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRingKeepsLastLines(t *testing.T) {
	for _, tc := range []struct {
		size, add int
		first     uint64
	}{
		{size: 3, add: 2, first: 1},
		{size: 3, add: 3, first: 1},
		{size: 3, add: 7, first: 5},
	} {
		r := New(tc.size)
		for i := range tc.add {
			r.Add(time.Unix(int64(i), 0), "INFO", fmt.Sprint("line ", i+1))
		}
		got := r.Lines()
		want := min(tc.size, tc.add)
		if len(got) != want {
			t.Fatalf("size %d add %d: %d lines, want %d", tc.size, tc.add, len(got), want)
		}
		for i, l := range got {
			if l.Seq != tc.first+uint64(i) || l.Text != fmt.Sprint("line ", l.Seq) {
				t.Fatalf("size %d add %d: line %d = %+v", tc.size, tc.add, i, l)
			}
		}
	}
}

func TestTeeFormatsAndForwards(t *testing.T) {
	var out bytes.Buffer
	r := New(10)
	var hooked []Line
	r.OnLine(func(l Line) { hooked = append(hooked, l) })
	log := slog.New(r.Tee(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.Debug("hidden")
	log.With("board", "ews1").WithGroup("req").Info("served", "status", 200)
	lines := r.Lines()
	if len(lines) != 1 || len(hooked) != 1 {
		t.Fatalf("ring %v, hook %v: want the one info line (debug is below the level)", lines, hooked)
	}
	if got, want := lines[0].Text, "msg=served board=ews1 req.status=200"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	if lines[0].Level != "INFO" {
		t.Fatalf("level %q", lines[0].Level)
	}
	if !strings.Contains(out.String(), "req.status=200") {
		t.Fatalf("inner handler did not get the record: %q", out.String())
	}
	if r.Inner() == nil {
		t.Fatal("Inner is nil after Tee")
	}
}
