package promx

import (
	"bytes"
	"fmt"
	"strings"
)

// Lint checks the families of r against the Prometheus naming conventions
// (the rules of promlint that apply to what we write) and returns one line
// per problem: HELP text missing, a counter without _total or another kind
// with it, camelCase or reserved characters, a reserved suffix, a unit that
// is not the base unit.
func Lint(r *Registry) []string {
	var buf bytes.Buffer
	r.WritePrometheus(&buf)
	help := map[string]bool{}
	var problems []string
	add := func(name, format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSuffix(line, "\n")
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			help[name] = text != ""
			continue
		}
		rest, ok := strings.CutPrefix(line, "# TYPE ")
		if !ok {
			if !strings.HasPrefix(line, "#") && line != "" {
				_, labels, _ := strings.Cut(strings.Fields(line)[0], "{")
				for _, pair := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
					if l, _, ok := strings.Cut(pair, "="); ok && !snake(l) {
						add(l, "label names should be written in 'snake_case' not 'camelCase'")
					}
				}
			}
			continue
		}
		name, kind, _ := strings.Cut(rest, " ")
		if !help[name] {
			add(name, "no help text")
		}
		total := strings.HasSuffix(name, "_total")
		switch {
		case kind == KindCounter && !total:
			add(name, `counter metrics should have "_total" suffix`)
		case kind != KindCounter && total:
			add(name, `non-counter metrics should not have "_total" suffix`)
		}
		if !snake(name) {
			add(name, "metric names should be written in 'snake_case' not 'camelCase'")
		}
		if kind != KindHistogram {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				if strings.HasSuffix(name, s) {
					add(name, "non-histogram metrics should not have %q suffix", s)
				}
			}
		}
		for _, u := range []string{"milliseconds", "microseconds", "nanoseconds", "minutes", "hours", "days", "weeks", "kilobytes", "megabytes", "gigabytes", "percent", "celsius_degrees"} {
			if strings.Contains(name, "_"+u) {
				add(name, "use base unit instead of %q", u)
			}
		}
	}
	return problems
}

// snake reports whether s is lower snake case: [a-z0-9_], no leading digit.
func snake(s string) bool {
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return s != ""
}
