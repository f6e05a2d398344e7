// Package hal owns a board's devices: the driver registry, drivers over periph.io, the simulated board, and their state.
package hal
