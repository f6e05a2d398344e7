//go:build !chaosbug

package dispatch

import "net/http"

// chaosDropAnswer is the chaos harness's planted bug (chaosbug.go); in every
// normal build it does nothing.
func chaosDropAnswer(*http.Request) {}
