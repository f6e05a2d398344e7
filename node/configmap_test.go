package node

import (
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// parseConfig is what `ews run` refuses of a file: config.Parse, then the
// checks of the packages the mapping feeds (CheckConfig).
func parseConfig(path string, data []byte) (*config.Config, error) {
	cfg, err := config.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if errs := CheckConfig(cfg); len(errs) > 0 {
		return cfg, errs
	}
	return cfg, nil
}

// parseAllConfig is config.ParseAll with CheckConfig's problems too.
func parseAllConfig(path string, data []byte) (*config.Config, config.Errors) {
	cfg, errs := config.ParseAll(path, data)
	if cfg == nil {
		return nil, errs
	}
	errs = append(errs, CheckConfig(cfg)...)
	errs.Sort()
	return cfg, errs
}

// bootOf is mapConfig of cfg, for tests that build a Node by hand.
func bootOf(t *testing.T, cfg *config.Config) *boot {
	t.Helper()
	b, err := mapConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
