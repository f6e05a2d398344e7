package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// SearchPaths is where Find looks when no path is given, after $EWS_CONFIG.
var SearchPaths = []string{"/boot/firmware/ews.toml", "/boot/ews.toml", "/etc/ews/ews.toml"}

// Find returns the config path to use: explicit if set, else $EWS_CONFIG,
// else the first of SearchPaths that exists.
func Find(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p := os.Getenv("EWS_CONFIG"); p != "" {
		return p, nil
	}
	for _, p := range SearchPaths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("config: no config file: set --config or $EWS_CONFIG, or create one of %s (try `ews config init`)", strings.Join(SearchPaths, ", "))
}

// Load reads, decodes and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a config held in memory; path names it in errors.
// Unknown keys, wrong types and bad durations are refused with their line.
func Parse(path string, data []byte) (*Config, error) {
	cfg := DefaultConfig()
	cfg.Sched.Classes = nil // the file's classes replace the defaults, not append
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, decodeError(path, err)
	}
	cfg.Path = path
	cfg.Lines = keyLines(data)
	cfg.fill()
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return &cfg, nil
}

// fill sets defaults that depend on other keys.
func (c *Config) fill() {
	if len(c.Sched.Classes) == 0 {
		c.Sched.Classes = DefaultClasses()
	}
	for i := range c.Devices {
		if c.Devices[i].Node == "" {
			c.Devices[i].Node = c.Node.Name
		}
	}
	for i := range c.Health.Checks {
		if c.Health.Checks[i].Interval.Duration == 0 {
			c.Health.Checks[i].Interval = D(5e9)
		}
		if c.Health.Checks[i].Timeout.Duration == 0 {
			c.Health.Checks[i].Timeout = c.Health.Checks[i].Interval
		}
		if c.Health.Checks[i].Runstate == "" {
			c.Health.Checks[i].Runstate = "down"
		}
	}
}

// decodeError turns the decoder's error into file:line:col: key: message.
func decodeError(path string, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		return Errors{{File: path, Line: row, Col: col, Key: strings.Join(de.Key(), "."), Msg: msg}}
	}
	var se *toml.StrictMissingError
	if errors.As(err, &se) {
		var out Errors
		for _, e := range se.Errors {
			row, col := e.Position()
			out = append(out, &Error{File: path, Line: row, Col: col, Key: strings.Join(e.Key(), "."), Msg: "unknown key"})
		}
		return out
	}
	return Errors{{File: path, Msg: err.Error()}}
}
