package hal

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		parts []string // empty: no error
	}{
		{"fine", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\npin = \"GPIO1\"\n", nil},
		{"no pin", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n", []string{"device[0].pin", `"r"`}},
		{"bad edge", "[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO1\"\nedge = \"up\"\n", []string{"device[0].edge", `"up"`}},
		{"bad frequency", "[[device]]\nname = \"l\"\ndriver = \"sim-pwm\"\nfrequency = \"1 parsec\"\n", []string{"device[0].frequency"}},
		{"bad i2c address", "[[device]]\nname = \"e\"\ndriver = \"bmxx80\"\nbus = \"1\"\naddress = \"0x200\"\n", []string{"device[0].address", "0x200"}},
		{"bad modbus", "[[device]]\nname = \"m\"\ndriver = \"modbus-register\"\nnode = \"any\"\naddress = \"10.0.0.5\"\nregister = 70000\n", []string{"device[0].address", "device[0].register"}},
		{"program missing", "[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"/nonexistent/x\"]\n", []string{"device[0].command", "/nonexistent/x"}},
		{"interlock sensor", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninterlock = [\"t\"]\n[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\n", []string{"device[0].interlock", "two outputs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Check(parse(t, tt.toml))
			if len(tt.parts) == 0 {
				if errs != nil {
					t.Fatalf("unexpected: %v", errs)
				}
				return
			}
			contains(t, errs, tt.parts...)
		})
	}
}
