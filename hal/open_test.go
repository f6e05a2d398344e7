package hal

import (
	"errors"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

func TestOpenRefusesBadWiring(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		parts []string // the error names these
	}{
		{"pin that does not exist", "[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO99\"\n",
			[]string{"test.toml:10", "device[0].pin", `"r1"`, "GPIO99", "no GPIO pin"}},
		{"pin used twice across drivers", "[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n\n[[device]]\nname = \"b1\"\ndriver = \"gpio-in\"\npin = \"GPIO17\"\nnode = \"any\"\n",
			[]string{"device[1].pin", `"b1"`, "GPIO17", `already used by device "r1"`}},
		{"I2C bus that cannot open", "[[device]]\nname = \"t1\"\ndriver = \"bmxx80\"\nbus = \"7\"\n",
			[]string{"device[0].bus", `"t1"`, `I2C bus "7"`}},
		{"1-wire bus that cannot open", "[[device]]\nname = \"t2\"\ndriver = \"ds18b20\"\nbus = \"w1\"\naddress = \"0x28\"\n",
			[]string{"device[0].bus", `"t2"`, `1-wire bus "w1"`}},
		{"bad frequency", "[[device]]\nname = \"l\"\ndriver = \"pwm\"\npin = \"GPIO18\"\nfrequency = \"fast\"\n",
			[]string{"device[0].frequency", `"fast"`}},
		{"bad pull", "[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO4\"\npull = \"sideways\"\n",
			[]string{"device[0].pull", "sideways"}},
		{"modbus address", "[[device]]\nname = \"c\"\ndriver = \"modbus-coil\"\naddress = \"plc\"\nnode = \"any\"\n",
			[]string{"device[0].address", `"plc"`}},
		{"command missing", "[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"/nonexistent/prog\"]\n",
			[]string{"device[0].command", "/nonexistent/prog"}},
		{"interlock with a sensor", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninterlock = [\"t\"]\n\n[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\n",
			[]string{"device[0].interlock", "two outputs"}},
		{"interlock both on at start", "[[device]]\nname = \"a\"\ndriver = \"sim-switch\"\ninitial = \"on\"\ninterlock = [\"b\"]\n\n[[device]]\nname = \"b\"\ndriver = \"sim-switch\"\ninitial = \"on\"\n",
			[]string{"device[0].interlock", "both start on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewSimBoard()
			ds, err := New(parse(t, tt.toml), Options{Board: b})
			if ds != nil {
				t.Fatal("New returned devices along with an error")
			}
			contains(t, err, tt.parts...)
			var ce config.Errors
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not config.Errors", err)
			}
		})
	}
}

// A device that failed to open must not leave the others running.
func TestOpenFailureClosesOthers(t *testing.T) {
	b := NewSimBoard()
	cfg := parse(t, "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\npin = \"GPIO2\"\non_stop = \"on\"\n\n[[device]]\nname = \"x\"\ndriver = \"gpio-out\"\npin = \"nope\"\n")
	if _, err := New(cfg, Options{Board: b}); err == nil {
		t.Fatal("want an error")
	}
	if !b.Pins["GPIO2"].Read() {
		t.Fatal("the opened device was not closed (on_stop not written)")
	}
}

func TestRemoteAndUnknown(t *testing.T) {
	src := "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\"ews1=127.0.0.1:7946\", \"ews2=127.0.0.2:7946\"]\n[sim]\n" +
		"[[device]]\nname = \"far\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\nnode = \"ews2\"\n" +
		"[[device]]\nname = \"near\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n"
	cfg, err := config.Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ds := open(t, cfg, NewSimBoard())
	_, err = ds.Do(t.Context(), "far", Action{Kind: TurnOn})
	var re *RemoteError
	if !errors.As(err, &re) || re.Node != "ews2" {
		t.Fatalf("far: %v, want RemoteError naming ews2", err)
	}
	if _, err := ds.Do(t.Context(), "ghost", Action{Kind: TurnOn}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ghost: %v, want ErrNotFound", err)
	}
	list := ds.List()
	if len(list) != 2 || list[0].State != StateRemote || list[0].Node != "ews2" || list[1].Node != "ews1" {
		t.Fatalf("List = %+v", list)
	}
}

func TestInterlock(t *testing.T) {
	b := NewSimBoard()
	ds := open(t, parse(t, "[[device]]\nname = \"up\"\ndriver = \"gpio-out\"\npin = \"GPIO20\"\ninterlock = [\"down\"]\n\n"+
		"[[device]]\nname = \"down\"\ndriver = \"gpio-out\"\npin = \"GPIO21\"\n"), b)
	up, down := b.Pins["GPIO20"], b.Pins["GPIO21"]
	both := func() bool { return bool(up.Read()) && bool(down.Read()) }
	steps := []struct {
		dev      string
		a        Action
		wantUp   bool
		wantDown bool
	}{
		{"up", Action{Kind: TurnOn}, true, false},
		{"down", Action{Kind: TurnOn}, false, true}, // declared one way, holds both ways
		{"up", Action{Kind: Toggle}, true, false},
		{"down", Action{Kind: Set, Value: 1}, false, true},
		{"up", Action{Kind: Pulse, Duration: 1}, false, false},
		{"down", Action{Kind: TurnOn}, false, true},
		{"up", Action{Kind: TurnOff}, false, true}, // turning off leaves the partner alone
	}
	for i, st := range steps {
		do(t, ds, st.dev, st.a)
		if bool(up.Read()) != st.wantUp || bool(down.Read()) != st.wantDown {
			t.Fatalf("step %d %s %s: up=%v down=%v", i, st.dev, st.a, up.Read(), down.Read())
		}
	}
	// concurrent turn_on from both sides never leaves both on
	done := make(chan struct{})
	for _, name := range []string{"up", "down"} {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				if _, err := ds.Do(t.Context(), name, Action{Kind: TurnOn}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 2 {
		<-done
	}
	if both() {
		t.Fatal("both interlocked outputs on")
	}
}
