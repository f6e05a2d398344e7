package row

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// LoadFigures is a set of the figures of a Load, by the JSON names of
// Load's fields: what a board could not read (Board.LoadUnknown). One byte,
// so a Board stays comparable. ONLY APPEND to the list of figures.
type LoadFigures uint8

// The figures of a Load.
const (
	FigCPU      LoadFigures = 1 << iota // cpu
	FigMem                              // mem
	FigNet                              // net and net_pps
	FigDisk                             // disk and disk_ops
	FigDiskUsed                         // disk_used
	FigCPUMHz                           // cpu_mhz
	FigMemMB                            // mem_mb
)

var figureNames = []string{"cpu", "mem", "net", "disk", "disk_used", "cpu_mhz", "mem_mb"}

// Names lists the set's figures in the order of Load's fields.
func (f LoadFigures) Names() []string {
	var out []string
	for i, n := range figureNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// String is the names joined by commas ("" for none).
func (f LoadFigures) String() string { return strings.Join(f.Names(), ",") }

// MarshalJSON writes the set as a list of names.
func (f LoadFigures) MarshalJSON() ([]byte, error) {
	names := f.Names()
	if names == nil {
		names = []string{}
	}
	return json.Marshal(names)
}

// UnmarshalJSON reads a list of names; an unknown name is an error.
func (f *LoadFigures) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("row: load figures: %w", err)
	}
	var out LoadFigures
	for _, n := range names {
		i := slices.Index(figureNames, n)
		if i < 0 {
			return fmt.Errorf("row: unknown load figure %q (want one of %s)", n, strings.Join(figureNames, ", "))
		}
		out |= 1 << i
	}
	*f = out
	return nil
}
