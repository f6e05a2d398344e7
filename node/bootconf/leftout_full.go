//go:build !lite

package bootconf

import "github.com/ews-firmware/ews/internal/config"

// leftOut is what of c this build cannot honour: nothing in the full build
// (the lite build's is in leftout_lite.go).
func leftOut(*config.Config) config.Errors { return nil }
