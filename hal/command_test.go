package hal

import (
	"errors"
	"testing"
)

func TestCommand(t *testing.T) {
	ds := open(t, parse(t, `[[device]]
name = "cpu"
driver = "command"
command = ["sh", "-c", "echo 42.5"]
units = "°C"

[[device]]
name = "echo"
driver = "command"
command = ["sh", "-c", "echo $EWS_DEVICE $EWS_ACTION $EWS_VALUE"]

[[device]]
name = "slow"
driver = "command"
command = ["sleep", "10"]
timeout = "50ms"

[[device]]
name = "bad"
driver = "command"
command = ["sh", "-c", "echo broken >&2; exit 3"]
`), nil)
	if s := do(t, ds, "cpu", Action{Kind: Read}); s.Value != 42.5 || s.Unit != "°C" {
		t.Fatalf("cpu: %+v", s)
	}
	if s := do(t, ds, "echo", Action{Kind: Set, Value: 7}); s.Value != "echo set 7" {
		t.Fatalf("echo: %+v", s)
	}
	tests := []struct {
		dev  string
		want string
	}{{"slow", "timed out after 50ms"}, {"bad", "broken"}}
	for _, tt := range tests {
		_, err := ds.Do(t.Context(), tt.dev, Action{Kind: Read})
		var de *DriverError
		if !errors.As(err, &de) {
			t.Fatalf("%s: %v, want DriverError", tt.dev, err)
		}
		contains(t, err, tt.dev, tt.want)
	}
}
