package main

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary be 002's restart helper and 003's delay
// line, as main does.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == serveReadyzArg {
		_ = serveReadyz(os.Args[2])
		os.Exit(1)
	}
	if len(os.Args) >= 2 && os.Args[1] == delayLineArg {
		_, _ = os.Stderr.WriteString(delayLine(os.Args[2:]).Error() + "\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The restart cell measures every kill; its figures are printed, not
// asserted (each is bounded by restartLimit inside the cell).
func TestMeasureRestarts(t *testing.T) {
	took, err := measureRestarts(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(took) != 2 {
		t.Fatalf("%d restarts measured, want 2", len(took))
	}
	t.Logf("restart times: %v", took)
}
