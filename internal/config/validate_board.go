package config

// Values of node.board (hal owns their meaning: hal.Board*).
const (
	BoardAuto = "auto"
	BoardSim  = "sim"
	BoardHost = "host"
)

// validateBoard checks node.board: auto, sim or host, and host without a
// [sim] table (which asks for the simulated board).
func (c *Config) validateBoard(bad func(string, string, ...any)) {
	switch c.Node.Board {
	case "", BoardAuto, BoardSim:
	case BoardHost:
		if c.Sim != nil {
			line := c.Lines["sim"]
			bad("node.board", "board = \"host\" but the file has a [sim] table (line %d), which asks for the simulated board; drop one", line)
		}
	default:
		bad("node.board", "%q: want auto, sim or host", c.Node.Board)
	}
}
