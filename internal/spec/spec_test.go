package spec

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// A [[device]] table decodes straight into Device: durations as Go
// duration strings (a negative or unreadable one refused), a command as
// argv or as a shell line, max_age unset (nil) apart from "0s".
func TestDeviceDecodes(t *testing.T) {
	tests := []struct {
		name, doc string
		check     func(Device) bool
		err       string
	}{
		{"durations", "debounce = \"20ms\"\npoll = \"1s\"\ntimeout = \"2s\"", func(d Device) bool {
			return d.Debounce.Duration == 20*time.Millisecond && d.Poll.Duration == time.Second && d.Timeout.Duration == 2*time.Second && d.MaxAge == nil
		}, ""},
		{"max_age 0s", "max_age = \"0s\"", func(d Device) bool { return d.MaxAge != nil && d.MaxAge.Duration == 0 }, ""},
		{"argv", "command = [\"/bin/echo\", \"hi\"]", func(d Device) bool { return slices.Equal(d.Command, Command{"/bin/echo", "hi"}) }, ""},
		{"shell line", "command = \"echo hi\"", func(d Device) bool { return slices.Equal(d.Command, Command{"/bin/sh", "-c", "echo hi"}) }, ""},
		{"negative", "poll = \"-1s\"", nil, "negative duration"},
		{"not a duration", "debounce = \"soon\"", nil, "bad duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Device
			err := toml.Unmarshal([]byte(tt.doc), &d)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case !tt.check(d):
				t.Fatalf("decoded %+v", d)
			}
		})
	}
}
