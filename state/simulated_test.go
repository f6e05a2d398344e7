package state

import (
	"encoding/json"
	"strings"
	"testing"
)

// A board's report that it is simulated reaches every board's view and
// Boards; a board that does not say so stays unmarked, and the JSON
// field is only there when true.
func TestSimulatedFlagReachesTheView(t *testing.T) {
	s := newSimNet(t, 2, fastTiming)
	s.start("ews1", "ews2")
	for range 5 {
		s.step()
	}
	m := s.node("ews1")
	if _, err := m.e.Receive(s.now, &ReportMsg{Name: "ews2", Capacity: 4, Weight: 1, Runstate: Running, PeersHash: m.e.PeersHash(), Simulated: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		board string
		want  bool
	}{{"ews1", false}, {"ews2", true}} {
		if got := s.row("ews1", c.board).Simulated; got != c.want {
			t.Errorf("ews1's view of %s: simulated %v, want %v", c.board, got, c.want)
		}
		rank := map[string]int{"ews1": 0, "ews2": 1}[c.board]
		if got := m.e.Boards(s.now)[rank].Simulated; got != c.want {
			t.Errorf("ews1's Boards for %s: simulated %v, want %v", c.board, got, c.want)
		}
	}
	b, err := json.Marshal(m.e.View(s.now))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"simulated":true`); n != 1 || strings.Contains(string(b), `"simulated":false`) {
		t.Fatalf("view JSON has %d simulated:true (want 1, and no false): %s", n, b)
	}
}
