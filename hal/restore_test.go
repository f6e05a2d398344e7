package hal

import (
	"context"
	"errors"
	"testing"
	"time"
)

const restoreDevices = `
[[device]]
name = "relay1"
driver = "sim-switch"
[[device]]
name = "fan"
driver = "sim-pwm"
[[device]]
name = "lamp"
driver = "sim-switch"
restore = "initial"
[[device]]
name = "temp"
driver = "sim-sensor"
[[device]]
name = "bus"
driver = "sim-switch"
node = "any"
`

func TestRestoreMode(t *testing.T) {
	cases := []struct {
		driver, node, restore, want string
	}{
		{"gpio-out", "", "", RestoreLast},
		{"pwm", "ews2", "", RestoreLast},
		{"modbus-coil", "ews1", "", RestoreLast},
		{"gpio-out", "any", "", RestoreInitial}, // one copy per board: no single memory
		{"command", "", "", RestoreInitial},     // runs a program: never replayed by default
		{"gpio-in", "", "", RestoreInitial},
		{"gpio-out", "", "initial", RestoreInitial},
	}
	for _, c := range cases {
		got := RestoreMode(DeviceSpec{Driver: c.driver, Node: c.node, Restore: c.restore}, lookup(c.driver))
		if got != c.want {
			t.Errorf("%s node=%q restore=%q: %q, want %q", c.driver, c.node, c.restore, got, c.want)
		}
	}
}

func TestCheckRestore(t *testing.T) {
	cases := []struct {
		name, devices, want string
	}{
		{"bad value", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\nrestore = \"always\"", `"always": want last or initial`},
		{"sensor", "[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\nrestore = \"last\"", "no state to restore"},
		{"command", "[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"true\"]\nrestore = \"last\"", "no state to restore"},
		{"any", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\nnode = \"any\"\nrestore = \"last\"", "wired to one board"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := CheckSpecs("ews1", parse(t, c.devices).Devices)
			if len(errs) != 1 || errs[0].Key != "restore" {
				t.Fatalf("errors %v, want one on key restore", errs)
			}
			contains(t, errs[0], c.want)
		})
	}
	if errs := CheckSpecs("ews1", parse(t, restoreDevices).Devices); len(errs) != 0 {
		t.Errorf("valid devices refused: %v", errs)
	}
}

func TestRestorable(t *testing.T) {
	ds := open(t, parse(t, restoreDevices), nil)
	var names []string
	for _, s := range ds.Restorable() {
		names = append(names, s.Name)
	}
	if len(names) != 2 || names[0] != "relay1" || names[1] != "fan" {
		t.Errorf("Restorable = %v, want [relay1 fan]", names)
	}
}

// TestRestoreOrdering is the rule that keeps a board from going back in
// time: a remembered state is written only when it is newer than the
// device's own and no command ran on the device since the board started.
func TestRestoreOrdering(t *testing.T) {
	ctx := context.Background()
	on := Snapshot{Name: "relay1", State: StateOn, Value: true, Seq: 1000}
	cases := []struct {
		name    string
		before  func(*Devices)
		from    Snapshot
		wantErr error
		want    string // state after
	}{
		{"fresh board takes the remembered state", nil, on, nil, StateOn},
		{"a command since start wins over memory", func(ds *Devices) { do(t, ds, "relay1", Action{Kind: TurnOff}) }, on, ErrCommanded, StateOff},
		{"a read is not a command", func(ds *Devices) { do(t, ds, "relay1", Action{Kind: Read}) }, on, nil, StateOn},
		{"not newer than a restore already applied", func(ds *Devices) {
			if _, err := ds.Restore(ctx, Snapshot{Name: "relay1", State: StateOff, Value: false, Seq: 2000}); err != nil {
				t.Fatal(err)
			}
		}, on, ErrOlder, StateOff},
		{"restore = initial is never restored", nil, Snapshot{Name: "lamp", State: StateOn, Seq: 5}, ErrNotRestorable, StateOff},
		{"a sensor is never restored", nil, Snapshot{Name: "temp", State: StateOn, Seq: 5}, ErrNotRestorable, ""},
		{"an unknown device is refused", nil, Snapshot{Name: "gone", State: StateOn, Seq: 5}, ErrNotRestorable, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := open(t, parse(t, restoreDevices), nil)
			if c.before != nil {
				c.before(ds)
			}
			s, err := ds.Restore(ctx, c.from)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("Restore: %v, want %v", err, c.wantErr)
			}
			if c.want == "" {
				return
			}
			got, _ := ds.Get(c.from.Name)
			if got.State != c.want {
				t.Errorf("state %s, want %s", got.State, c.want)
			}
			if err == nil && (!s.Restored || s.Seq != c.from.Seq || !got.Restored) {
				t.Errorf("restored snapshot %+v: want restored with seq %d", s, c.from.Seq)
			}
		})
	}
}

func TestRestorePWMAndSeq(t *testing.T) {
	ds := open(t, parse(t, restoreDevices), nil)
	s, err := ds.Restore(context.Background(), Snapshot{Name: "fan", State: StateOn, Value: 42.5, Unit: "%", Seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Value != 42.5 || s.State != StateOn || !s.Restored {
		t.Fatalf("fan after restore: %+v, want 42.5 %% on, restored", s)
	}
	// the next command is newer than the restored state, and clears the mark
	s = do(t, ds, "fan", Action{Kind: TurnOff})
	if s.Seq <= 7 || s.Restored {
		t.Errorf("after a command: seq %d restored %v, want seq > 7 and not restored", s.Seq, s.Restored)
	}
	// turn_on brings back the restored duty
	if s = do(t, ds, "fan", Action{Kind: TurnOn}); s.Value != 42.5 {
		t.Errorf("turn_on after restore: %v, want 42.5", s.Value)
	}
}

func TestSeqClock(t *testing.T) {
	var c seqClock
	if v := c.next(0, 5000); v != 5000 {
		t.Errorf("first: %d, want the clock 5000", v)
	}
	if v := c.next(5000, 4000); v != 5001 {
		t.Errorf("clock went back: %d, want 5001", v)
	}
	c.observe(9000)
	if v := c.next(0, 6000); v != 9001 {
		t.Errorf("after a restored 9000: %d, want 9001", v)
	}
	if v := c.next(0, 20000); v != 20000 {
		t.Errorf("clock ahead: %d, want 20000", v)
	}
}

func TestHoldWaitsForRelease(t *testing.T) {
	ds := open(t, parse(t, restoreDevices), nil)
	if ds.Holding() {
		t.Fatal("holding before Hold")
	}
	ds.Hold()
	if !ds.Holding() {
		t.Fatal("not holding")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := ds.Do(ctx, "relay1", Action{Kind: TurnOn}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do while held: %v, want the caller's deadline", err)
	}
	// restore goes through while held
	if _, err := ds.Restore(context.Background(), Snapshot{Name: "relay1", State: StateOn, Seq: 3}); err != nil {
		t.Fatalf("Restore while held: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ds.Do(context.Background(), "relay1", Action{Kind: TurnOff})
		done <- err
	}()
	ds.Release()
	ds.Release() // twice is fine
	if err := <-done; err != nil {
		t.Fatalf("Do after Release: %v", err)
	}
	if ds.Holding() {
		t.Error("still holding after Release")
	}
	if s, _ := ds.Get("relay1"); s.State != StateOff || s.Restored {
		t.Errorf("relay1 %+v: want off, not restored", s)
	}
}
