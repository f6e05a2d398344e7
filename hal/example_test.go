package hal_test

import (
	"context"
	"fmt"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
)

// Two interlocked relays on the simulated board: turning one on turns the
// other off first.
func Example() {
	cfg, err := config.Parse("example.toml", []byte(`
[node]
name = "ews1"
[sim]
[[device]]
name = "up"
driver = "gpio-out"
pin = "GPIO20"
interlock = ["down"]
[[device]]
name = "down"
driver = "gpio-out"
pin = "GPIO21"
`))
	if err != nil {
		fmt.Println(err)
		return
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
