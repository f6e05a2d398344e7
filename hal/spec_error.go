package hal

import (
	"fmt"
	"strings"
)

// SpecError is one problem with a device's spec or its wiring. Key is the
// device key at fault ("pin", "address"); Index is the device's position in
// Config.Devices (or the list given to CheckSpecs), so a caller that read
// them from a file can point at the line.
type SpecError struct {
	Index  int
	Device string
	Key    string
	Err    error
}

func (e *SpecError) Error() string { return fmt.Sprintf("hal: device %q: %v", e.Device, e.Err) }
func (e *SpecError) Unwrap() error { return e.Err }

// SpecErrors is every problem found, in device order. New and CheckSpecs
// return it.
type SpecErrors []*SpecError

func (es SpecErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap gives errors.Is and errors.As every problem.
func (es SpecErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
