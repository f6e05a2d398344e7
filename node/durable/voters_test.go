package durable

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMaxVoters(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 3, 4: 3, 5: 5, 6: 5, 9: 5} {
		if got := MaxVoters(n); got != want {
			t.Errorf("MaxVoters(%d) = %d, want %d", n, got, want)
		}
	}
	if got := Bootstrap([]string{"a", "b", "c", "d"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Bootstrap of 4 = %v", got)
	}
	if got := Bootstrap(nil); got != nil {
		t.Errorf("Bootstrap(nil) = %v", got)
	}
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := 30 * time.Second
	down := func(ago time.Duration) time.Time { return now.Add(-ago) }
	// m builds members from "name:suffrage[:down-ago]" in rank order
	m := func(specs ...string) []Member {
		var out []Member
		for i, s := range specs {
			f := strings.Split(s, ":")
			name, suf := f[0], f[1]
			var ago time.Duration
			if len(f) == 3 {
				ago, _ = time.ParseDuration(f[2])
			}
			mb := Member{Name: name, Rank: i, Suffrage: map[string]Suffrage{"v": Voter, "n": Nonvoter, "-": Absent}[suf]}
			if ago > 0 {
				mb.DownSince = down(ago)
			}
			out = append(out, mb)
		}
		return out
	}
	cases := []struct {
		name    string
		members []Member
		want    string
	}{
		{"one board: nothing to do", m("a:v"), ""},
		{"bootstrapped three", m("a:v", "b:v", "c:v"), ""},
		{"two boards: one voter, the other joins as non-voter", m("a:v", "b:-"), "add-nonvoter b"},
		{"four boards: the fourth is a non-voter", m("a:v", "b:v", "c:v", "d:-"), "add-nonvoter d"},
		{"six boards: five vote", m("a:v", "b:v", "c:v", "d:-", "e:-", "f:-"), "add-voter d,add-voter e,add-nonvoter f"},
		{"an absent board that is down is not added", m("a:v", "b:v", "c:v", "d:-:1m"), ""},
		{"voter down inside the grace: kept", m("a:v", "b:v", "c:v:10s", "d:n"), ""},
		{"voter down past the grace: replaced, then demoted", m("a:v", "b:v", "c:v:1m", "d:n"), "add-voter d,demote c"},
		{"no live non-voter: the dead voter keeps its vote", m("a:v", "b:v", "c:v:1m", "d:n:1m"), ""},
		{"three boards, one cut off: never shrinks", m("a:v", "b:v", "c:v:10m"), ""},
		{"best-ranked live non-voter replaces", m("a:v", "b:v:1m", "c:v", "d:v", "e:v", "f:n:1m", "g:n", "h:n"), "add-voter g,demote b"},
		{"two dead voters, one replacement: the worst-ranked goes first", m("a:v", "b:v:1m", "c:v:1m", "d:n"), "add-voter d,demote c"},
		{"a missing vote is filled from the non-voters", m("a:v", "b:v", "c:n"), "add-voter c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range Plan(c.members, len(c.members), grace, now) {
				got = append(got, ch.Op.String()+" "+ch.Board)
			}
			if s := joined(got); s != c.want {
				t.Errorf("Plan = %q, want %q", s, c.want)
			}
			// the plan keeps at least the voters there were, and is the same twice
			if again := Plan(c.members, len(c.members), grace, now); len(again) != len(got) {
				t.Errorf("a second plan differs: %v", again)
			}
		})
	}
}

func joined(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
