package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestMeasureTimesEachRequest(t *testing.T) {
	srv := httptest.NewServer(handler(5 * time.Millisecond))
	defer srv.Close()
	tests := []struct {
		path    string
		atLeast time.Duration
	}{
		{"/", 0},
		{"/sleep", 5 * time.Millisecond},
	}
	for _, tc := range tests {
		ds, err := measure(context.Background(), srv.Client(), http.MethodGet, srv.URL+tc.path, 4, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(ds) != 4 {
			t.Fatalf("%s: %d times, want 4", tc.path, len(ds))
		}
		for _, d := range ds {
			if d < tc.atLeast {
				t.Errorf("%s: %v, want at least %v", tc.path, d, tc.atLeast)
			}
		}
	}
}

func TestMeasureRefusesAnError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := measure(context.Background(), srv.Client(), http.MethodGet, srv.URL, 3, 0); err == nil {
		t.Fatal("a 404 was timed as an answer")
	}
}

func TestSummary(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // reversed: summary sorts
	}
	tests := []struct {
		in   []time.Duration
		want string
	}{
		{nil, "n=0"},
		{ds, "n=100 p50=50.00 p90=90.00 p99=99.00 max=100.00 ms"},
		{[]time.Duration{1500 * time.Microsecond}, "n=1 p50=1.50 p90=1.50 p99=1.50 max=1.50 ms"},
	}
	for _, tc := range tests {
		if got := summary(tc.in); got != tc.want {
			t.Errorf("summary(%d items) = %q, want %q", len(tc.in), got, tc.want)
		}
	}
}
