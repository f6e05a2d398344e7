package devapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestActionRanLog checks the debug record of every action run: one line
// per run with the key's digest, none for a replay or a refused request,
// and none at info level.
func TestActionRanLog(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level
		want  []string // keys of the "action ran" lines, in order
	}{
		{"debug", slog.LevelDebug, []string{KeyHash("k1"), ""}},
		{"info", slog.LevelInfo, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
			f := newFixture(t, Options{Logger: log})
			f.do("POST", "/api/devices/relay1/turn_on", token, "Idempotency-Key", "k1")
			f.do("POST", "/api/devices/relay1/turn_on", token, "Idempotency-Key", "k1") // replay
			f.do("POST", "/api/devices/relay1/turn_off", token)
			f.do("POST", "/api/devices/nope/turn_on", token, "Idempotency-Key", "k2") // 404: did not run
			var got []string
			for l := range strings.Lines(buf.String()) {
				var rec struct{ Msg, Device, Action, Key string }
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				if rec.Msg != ActionRanMsg {
					continue
				}
				if rec.Device != "relay1" || rec.Action == "" {
					t.Errorf("line %q: want device relay1 and an action", l)
				}
				got = append(got, rec.Key)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("action-ran keys %q, want %q", got, tt.want)
			}
		})
	}
}
