package hal

import (
	"errors"
	"testing"
)

func TestOpenRefusesBadWiring(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		at    string   // index.key of the error
		parts []string // the error names these
	}{
		{"pin that does not exist", "[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO99\"\n",
			"0.pin", []string{`"r1"`, "GPIO99", "no GPIO pin"}},
		{"pin used twice across drivers", "[[device]]\nname = \"r1\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n\n[[device]]\nname = \"b1\"\ndriver = \"gpio-in\"\npin = \"GPIO17\"\nnode = \"any\"\n",
			"1.pin", []string{`"b1"`, "GPIO17", `already used by device "r1"`}},
		{"I2C bus that cannot open", "[[device]]\nname = \"t1\"\ndriver = \"bmxx80\"\nbus = \"7\"\n",
			"0.bus", []string{`"t1"`, `I2C bus "7"`}},
		{"1-wire bus that cannot open", "[[device]]\nname = \"t2\"\ndriver = \"ds18b20\"\nbus = \"w1\"\naddress = \"0x28\"\n",
			"0.bus", []string{`"t2"`, `1-wire bus "w1"`}},
		{"bad frequency", "[[device]]\nname = \"l\"\ndriver = \"pwm\"\npin = \"GPIO18\"\nfrequency = \"fast\"\n",
			"0.frequency", []string{`"fast"`}},
		{"bad pull", "[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO4\"\npull = \"sideways\"\n",
			"0.pull", []string{"sideways"}},
		{"modbus address", "[[device]]\nname = \"c\"\ndriver = \"modbus-coil\"\naddress = \"plc\"\nnode = \"any\"\n",
			"0.address", []string{`"plc"`}},
		{"command missing", "[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"/nonexistent/prog\"]\n",
			"0.command", []string{"/nonexistent/prog"}},
		{"interlock with a sensor", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninterlock = [\"t\"]\n\n[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\n",
			"0.interlock", []string{"two outputs"}},
		{"interlock both on at start", "[[device]]\nname = \"a\"\ndriver = \"sim-switch\"\ninitial = \"on\"\ninterlock = [\"b\"]\n\n[[device]]\nname = \"b\"\ndriver = \"sim-switch\"\ninitial = \"on\"\n",
			"0.interlock", []string{"both start on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewSimBoard()
			ds, err := New(parse(t, tt.toml), Options{Board: b})
			if ds != nil {
				t.Fatal("New returned devices along with an error")
			}
			contains(t, err, tt.parts...)
			var se SpecErrors
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not SpecErrors", err)
			}
			if got := at(se); len(got) != 1 || got[0] != tt.at {
				t.Fatalf("errors at %v, want [%s]", got, tt.at)
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
	cfg := parse(t, "[[device]]\nname = \"far\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\nnode = \"ews2\"\n"+
		"[[device]]\nname = \"near\"\ndriver = \"gpio-out\"\npin = \"GPIO17\"\n")
	ds := open(t, cfg, NewSimBoard())
	_, err := ds.Do(t.Context(), "far", Action{Kind: TurnOn})
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
