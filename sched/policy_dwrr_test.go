package sched

import "testing"

// TestDWRRTurnsFollowHeadroom: dwrr's turns are the configured weight
// times the cpu headroom (1 − cpu, at least DWRRFloor), in nginx's smooth
// rotation.
func TestDWRRTurnsFollowHeadroom(t *testing.T) {
	type spec struct {
		weight float64
		cpu    float64
	}
	tests := []struct {
		name   string
		boards [2]spec
		want   [2]int // of 60 turns
	}{
		{"equal weights, cpu 0.2 and 0.6: 2 to 1", [2]spec{{1, 0.2}, {1, 0.6}}, [2]int{40, 20}},
		{"weights 2 and 1, equal cpu: 2 to 1", [2]spec{{2, 0.5}, {1, 0.5}}, [2]int{40, 20}},
		{"both full (a corrected cpu past 1 too): by weight", [2]spec{{1, 1}, {1, 1.5}}, [2]int{30, 30}},
		{"a board of weight 0 gets no turn", [2]spec{{1, 0.9}, {0, 0}}, [2]int{60, 0}},
		{"an idle board of weight 1 against a busy one of weight 3", [2]spec{{1, 0}, {3, 0.8}}, [2]int{38, 22}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool := indexed([]*Board{
				{Name: "a", Rank: 0, Running: true, Capacity: 4, Weight: tc.boards[0].weight, Load: Load{CPU: tc.boards[0].cpu}},
				{Name: "b", Rank: 1, Running: true, Capacity: 4, Weight: tc.boards[1].weight, Load: Load{CPU: tc.boards[1].cpu}},
			})
			p := NewDWRR()
			got := map[string]int{}
			for range 60 {
				got[p.Select(pool, nil).Name]++
			}
			for i, n := range []string{"a", "b"} {
				if d := got[n] - tc.want[i]; d > 1 || d < -1 {
					t.Fatalf("turns %v, want a %d b %d (±1)", got, tc.want[0], tc.want[1])
				}
			}
		})
	}
}
