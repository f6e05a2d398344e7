package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/logring"
)

// TestBoardLogAnswer: GET /api/board/log needs credentials and answers the
// ring's last lines, oldest first: 200 unless ?n= says otherwise.
func TestBoardLogAnswer(t *testing.T) {
	ring := logring.New(300)
	_, base, _, _ := startNode(t, tokenConfig(t), WithLogRing(ring))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 250 {
		ring.Add(at, "INFO", fmt.Sprintf("line %d", i))
	}
	if code, _, _ := getJSON(t, "GET", base+"/api/board/log", nil, nil); code != 401 {
		t.Fatalf("without credentials: %d, want 401", code)
	}
	for _, c := range []struct {
		q           string
		n           int
		first, last string
	}{
		{"", 200, "", "line 249"},
		{"?n=5", 5, "line 245", "line 249"},
		{"?n=100000", 0, "", "line 249"}, // capped at the ring's size: whatever it holds
		{"?n=x", 200, "", "line 249"},
	} {
		t.Run(c.q, func(t *testing.T) {
			code, _, m := getJSON(t, "GET", base+"/api/board/log"+c.q, nil, bearer)
			lines, _ := m["lines"].([]any)
			if code != 200 || len(lines) == 0 {
				t.Fatalf("%d %v", code, m)
			}
			text := func(i int) string { return lines[i].(map[string]any)["text"].(string) }
			if c.n > 0 && len(lines) != c.n || text(len(lines)-1) != c.last || c.first != "" && text(0) != c.first {
				t.Errorf("%d lines, %q … %q", len(lines), text(0), text(len(lines)-1))
			}
		})
	}
}
