package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("a sleep that ran out: %v", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatalf("no sleep at all: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{0, time.Hour} {
		if err := Sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Fatalf("ended context, %v: %v, want context.Canceled", d, err)
		}
	}
}
