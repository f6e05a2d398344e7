package state

import "github.com/ews-firmware/ews/state/row"

// LoadFigures is a set of a Load's figures (row.LoadFigures): what a board
// could not read, listed as Board.LoadUnknown.
type LoadFigures = row.LoadFigures

// The figures of a Load (row's constants, here for state's users).
const (
	FigCPU      = row.FigCPU
	FigMem      = row.FigMem
	FigNet      = row.FigNet
	FigDisk     = row.FigDisk
	FigDiskUsed = row.FigDiskUsed
	FigCPUMHz   = row.FigCPUMHz
	FigMemMB    = row.FigMemMB
)
