package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a config file, with where it is.
type Error struct {
	File string
	Line int // 0 when the format gives none
	Col  int
	Key  string // dotted key path, e.g. "cluster.peers" or "device[1].pin"
	Msg  string
	// Warning marks a problem that does not stop the board (a secret file
	// others can read); it prints as "key: warning: message".
	Warning bool
	// Err is the cause, when there is one (a secret file that cannot be
	// read): errors.Is(e, fs.ErrNotExist) tells a file that is not there.
	Err error
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

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
	if e.Warning {
		b.WriteString("warning: ")
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

// Sort orders es by line, then column; problems with no line go last.
func (es Errors) Sort() {
	line := func(e *Error) int {
		if e.Line == 0 {
			return int(^uint(0) >> 1)
		}
		return e.Line
	}
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(line(a), line(b)), cmp.Compare(a.Col, b.Col))
	})
}

// Errorf builds an Error for key, with the line it was written on. What
// checks the config later (node's mapping, for the packages it configures:
// hal opening a pin, the scheduler's policies) uses it to point at the line.
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
