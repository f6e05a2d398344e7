package config

import (
	"fmt"
	"strings"
)

// Error is one problem in a config file, with where it is.
type Error struct {
	File string
	Line int // 0 when the format gives none
	Col  int
	Key  string // dotted key path, e.g. "cluster.peers" or "device[1].pin"
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Errorf builds an Error for key, with the line it was written on. Packages
// that check a config later (hal opening a pin) use it to point at the line.
func (c *Config) Errorf(key, format string, args ...any) *Error {
	line := 0
	if c.Lines != nil {
		line = c.Lines[key]
		if line == 0 {
			// fall back to the table the key belongs to
			if i := strings.LastIndex(key, "."); i > 0 {
				line = c.Lines[key[:i]]
			}
		}
	}
	return &Error{File: c.Path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}
