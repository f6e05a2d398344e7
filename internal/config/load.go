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

// Check is a validation of a parsed config by someone who knows more than
// the file (the packages it is mapped onto: bootconf.CheckConfig), run by
// ParseAll after Validate; each problem carries its line (Errorf).
type Check func(*Config) Errors

// Load reads, decodes and validates the file at path, with checks.
func Load(path string, checks ...Check) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, checks...)
}

// Parse decodes and validates a config held in memory; path names it in errors.
// Unknown keys, wrong types and bad durations are refused with their line;
// the error is Errors, every problem ParseAll finds.
func Parse(path string, data []byte, checks ...Check) (*Config, error) {
	cfg, errs := ParseAll(path, data, checks...)
	if len(errs) > 0 {
		return nil, errs
	}
	return cfg, nil
}

// LoadAll reads the file at path and returns ParseAll of it; an unreadable
// file is the one problem.
func LoadAll(path string, checks ...Check) (*Config, Errors) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: err.Error()}}
	}
	return ParseAll(path, data, checks...)
}

// ParseAll decodes what it can of a config and returns it with every
// problem, in line order: a TOML syntax error or duplicate key alone (the
// parser cannot read on), else every unknown key, every value of the wrong
// type, every rule Validate finds broken and every problem of checks. cfg
// is nil only when the file cannot be parsed (or holds a table too wide
// to decode: MaxTableKeys); with problems it holds the
// defaults in place of the bad values, for further checks.
func ParseAll(path string, data []byte, checks ...Check) (*Config, Errors) {
	pos := indexPositions(keyPositions(data))
	if errs := wideTables(pos.all); len(errs) > 0 {
		return nil, withFile(path, errs)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, withFile(path, decodeError(err, pos))
	}
	auto := takeCapacityAuto(doc)
	errs := shape(doc, pos)
	src := data
	if len(errs) > 0 || auto {
		// What is left after the bad keys went decodes strictly.
		b, err := toml.Marshal(doc)
		if err != nil {
			return nil, withFile(path, append(errs, &Error{Msg: err.Error()}))
		}
		src = b
	}
	cfg := DefaultConfig()
	dec := toml.NewDecoder(bytes.NewReader(src)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		// Something the shape check let through: the decoder has the last word.
		derrs := decodeError(err, pos)
		if len(errs) > 0 || auto { // the decoder read the rewritten copy: its lines are not the file's
			for _, e := range derrs {
				e.Line, e.Col = pos.find(e.Key)
			}
		}
		return nil, withFile(path, append(errs, derrs...))
	}
	cfg.Path = path
	cfg.Lines = keyLines(data)
	cfg.Node.CapacityAuto = auto
	cfg.fill()
	shaped := judgedKeys(errs)
	found := cfg.Validate()
	for _, check := range checks {
		found = append(found, check(&cfg)...)
	}
	for _, e := range found {
		if !shaped.judged(e.Key) { // a value the shape check removed is judged once
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return &cfg, nil
	}
	return &cfg, withFile(path, errs)
}

// judged is the keys the shape check reported, and every table or list
// they are inside: a set, so that checking each later problem against them
// is a lookup, not a scan of them all.
type judged map[string]bool

// judgedKeys is the set of errs' keys and of every key they are inside
// ("sched.class[0].match[1]" is inside "sched.class[0].match" and
// "sched.class[0]" and "sched").
func judgedKeys(errs Errors) judged {
	j := judged{}
	for _, e := range errs {
		if e.Key == "" {
			j[""] = true
		}
		for k := e.Key; k != "" && !j[k]; {
			j[k] = true
			i := strings.LastIndexAny(k, ".[")
			if i < 0 {
				break
			}
			k = k[:i]
		}
	}
	return j
}

// judged reports whether a problem at key or inside it was reported.
func (j judged) judged(key string) bool { return j[key] }

// withFile sets the file of every problem and sorts them by line.
func withFile(path string, errs Errors) Errors {
	for _, e := range errs {
		e.File = path
	}
	errs.Sort()
	return errs
}

// fill sets defaults that depend on other keys.
func (c *Config) fill() {
	c.fillTokenFromBundle()
	c.fillMQTT()
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

// decodeError turns the decoder's error into line:col: key: message; a key
// defined twice names the line of its first definition. The positions are
// the original file's: the key, not the decoder's offset, finds the line
// when the decoder read a rewritten copy.
func decodeError(err error, pos positions) Errors {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		key := strings.Join(de.Key(), ".")
		if strings.HasSuffix(msg, "already defined") || strings.HasSuffix(msg, "already exists") {
			full := key
			for _, kp := range pos.all {
				if kp.Line == row && (kp.Path == key || strings.HasSuffix(kp.Path, "."+key)) {
					full = kp.Path
					break
				}
			}
			first, _ := pos.find(full)
			return Errors{{Line: row, Col: col, Key: full, Msg: fmt.Sprintf("defined twice (first defined on line %d)", first)}}
		}
		return Errors{{Line: row, Col: col, Key: key, Msg: msg}}
	}
	var se *toml.StrictMissingError
	if errors.As(err, &se) {
		var out Errors
		for _, e := range se.Errors {
			key := strings.Join(e.Key(), ".")
			row, col := pos.find(key)
			out = append(out, &Error{Line: row, Col: col, Key: key, Msg: "unknown key"})
		}
		return out
	}
	return Errors{{Msg: err.Error()}}
}
