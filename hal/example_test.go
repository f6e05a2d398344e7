package hal_test

import (
	"context"
	"fmt"

	"github.com/ews-firmware/ews/hal"
)

// Two interlocked relays on the simulated board: turning one on turns the
// other off first.
func Example() {
	cfg := hal.Config{
		Node: "ews1",
		Sim:  &hal.SimConfig{},
		Devices: []hal.DeviceSpec{
			{Name: "up", Driver: "gpio-out", Pin: "GPIO20", Interlock: []string{"down"}},
			{Name: "down", Driver: "gpio-out", Pin: "GPIO21"},
		},
	}
	board := hal.NewSimBoard()
	devs, err := hal.New(cfg, hal.Options{Board: board})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer devs.Close()
	ctx := context.Background()
	_, _ = devs.Do(ctx, "up", hal.Action{Kind: hal.TurnOn})
	_, _ = devs.Do(ctx, "down", hal.Action{Kind: hal.TurnOn})
	for _, s := range devs.List() {
		fmt.Println(s.Name, s.State, board.Pins["GPIO20"].Read(), board.Pins["GPIO21"].Read())
	}
	_, err = devs.Do(ctx, "up", hal.Action{Kind: hal.Set, Value: 3})
	fmt.Println(err)
	// Output:
	// up off Low High
	// down on Low High
	// hal: device "up": bad value: 3: a switch takes 0 or 1
}
