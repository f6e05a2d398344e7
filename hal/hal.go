// Package hal owns a board's devices: drivers over periph.io, the simulated board, and their state.
package hal
