package config

import "github.com/ews-firmware/ews/hal"

// validateBoard checks node.board: auto, sim or host, and host without a
// [sim] table (which asks for the simulated board).
func (c *Config) validateBoard(bad func(string, string, ...any)) {
	switch c.Node.Board {
	case "", hal.BoardAuto, hal.BoardSim:
	case hal.BoardHost:
		if c.Sim != nil {
			line := c.Lines["sim"]
			bad("node.board", "board = \"host\" but the file has a [sim] table (line %d), which asks for the simulated board; drop one", line)
		}
	default:
		bad("node.board", "%q: want auto, sim or host", c.Node.Board)
	}
}
