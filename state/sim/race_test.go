//go:build race

package sim

// raceOn: the race detector slows a run about tenfold; the default run
// then takes fewer seeds.
const raceOn = true
