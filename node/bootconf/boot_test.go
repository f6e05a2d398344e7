package bootconf

import (
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// parseConfig is what `ews run` refuses of a file: config.Parse, then the
// checks of the packages the mapping feeds (CheckConfig).
func parseConfig(path string, data []byte) (*config.Config, error) {
	return config.Parse(path, data, CheckConfig)
}

// parseAllConfig is config.ParseAll with CheckConfig's problems too.
func parseAllConfig(path string, data []byte) (*config.Config, config.Errors) {
	return config.ParseAll(path, data, CheckConfig)
}

// bootOf is Map of cfg, for tests that build a Node by hand.
func bootOf(t *testing.T, cfg *config.Config) *Boot {
	t.Helper()
	b, err := Map(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
