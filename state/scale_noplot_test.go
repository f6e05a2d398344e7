//go:build !scaleplot

package state

import "errors"

// plotScale without the scaleplot tag: gonum's plot stays out of the
// state package's test binary (issue 49 part 4: every `go test ./state`
// compiled and linked it for a figure drawn by hand, rarely). Draw it
// with `go test -tags scaleplot` (scale_plot_test.go).
func plotScale([]scaleResult, string) error {
	return errors.New("state: EWS_SCALE_PLOT needs the plot: go test -tags scaleplot")
}
