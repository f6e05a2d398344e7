package config

import (
	"testing"
	"time"
)

func TestClockOffset(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: `"-3h"`, want: -3 * time.Hour},
		{in: `"+10m"`, want: 10 * time.Minute},
		{in: `"-30d"`, want: -30 * 24 * time.Hour},
		{in: `"2d"`, want: 48 * time.Hour},
		{in: `"0s"`},
		{in: `"soon"`, bad: true},
		{in: `"1.5d"`, bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			c, err := Parse("", []byte("[node]\nname = \"ews1\"\n[sim]\nclock_offset = "+tc.in+"\n"))
			if tc.bad {
				if err == nil {
					t.Fatalf("clock_offset = %s accepted", tc.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Sim.ClockOffset.Duration != tc.want {
				t.Fatalf("clock_offset = %s: %v, want %v", tc.in, c.Sim.ClockOffset.Duration, tc.want)
			}
		})
	}
}

func TestTimeKeysParse(t *testing.T) {
	c, err := Parse("", []byte("[node]\nname = \"ews1\"\nset_clock = true\n[cluster]\nntp = [\"pool.example\", \"10.0.0.1:123\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Node.SetClock || len(c.Cluster.NTP) != 2 {
		t.Fatalf("set_clock %v, ntp %v", c.Node.SetClock, c.Cluster.NTP)
	}
}
