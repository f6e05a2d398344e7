package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// A board of site 2 of three gets the far class for both other sites.
func TestNetemArgsThreeSites(t *testing.T) {
	args := netemArgs(&netEndpoint{name: "ews3", dev: "to-ews3", site: 2}, "10.77", 3, 5*time.Millisecond, 80*time.Millisecond)
	var filters []string
	for _, a := range args {
		if a[0] == "filter" {
			filters = append(filters, strings.Join(a, " "))
		}
	}
	want := []string{
		"filter add dev to-ews3 parent 1: protocol ip prio 1 u32 match ip src 10.77.1.0/24 flowid 1:20",
		"filter add dev to-ews3 parent 1: protocol ip prio 1 u32 match ip src 10.77.3.0/24 flowid 1:20",
	}
	if !slices.Equal(filters, want) {
		t.Errorf("filters %q, want %q", filters, want)
	}
}

// The hot site has three times each other site's clients, and the total
// follows the load.
func TestS3Clients(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want []int
	}{
		{0.25, []int{26, 9, 9}},
		{0.9, []int{95, 32, 32}},
		{0.001, []int{1, 1, 1}},
	} {
		if got := s3Clients(c.f); !slices.Equal(got, c.want) {
			t.Errorf("s3Clients(%v) = %v, want %v", c.f, got, c.want)
		}
	}
}

// Without root the scheme 3 cell is "not testable here" with the reason.
func TestNetScheme3NotTestable(t *testing.T) {
	saved := netProbe
	netProbe = func() string { return "needs root for ip netns (running as uid 1000)" }
	defer func() { netProbe = saved }()
	var out strings.Builder
	tb := &tbHarness{quick: true, out: &out}
	h := &harness{opt: &options{}, procs: newProcs(), tmp: t.TempDir(), out: &out}
	if err := h.netScheme3(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.verdicts) != 1 || tb.cells != 0 || tb.verdicts[0].word != "not-testable" || !strings.Contains(tb.verdicts[0].claim, "scheme 3") {
		t.Fatalf("verdicts %v, %d cells:\n%s", tb.verdicts, tb.cells, out.String())
	}
}
