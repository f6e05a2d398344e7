package promx

import (
	"bytes"
	"strconv"
	"strings"
)

// Value returns one series as a scrape of r shows it: series is the name
// with its labels as the text writes them (`x_total{a="b"}`, `h_count`).
// For tests and checks; ok is false when r does not expose it.
func (r *Registry) Value(series string) (v float64, ok bool) {
	var buf bytes.Buffer
	r.WritePrometheus(&buf)
	for line := range strings.Lines(buf.String()) {
		if rest, found := strings.CutPrefix(line, series+" "); found {
			f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// Family returns the lines of one family as a scrape of r shows them:
// HELP, TYPE and every sample (a histogram's _bucket, _sum and _count).
func (r *Registry) Family(name string) string {
	var buf, out bytes.Buffer
	r.WritePrometheus(&buf)
	for line := range strings.Lines(buf.String()) {
		if familyOf(line) == name {
			out.WriteString(line)
		}
	}
	return out.String()
}

// Count returns how many series (label sets) the family name has in r; a
// histogram counts once per label set, not per bucket.
func (r *Registry) Count(name string) int {
	n := 0
	for line := range strings.Lines(r.Family(name)) {
		if series, _, _ := strings.Cut(line, " "); !strings.HasPrefix(line, "#") &&
			(strings.HasPrefix(series, name+"_count") || strings.HasPrefix(series, name+"{") || series == name) {
			n++
		}
	}
	return n
}

// familyOf returns the family a line of the text format belongs to.
func familyOf(line string) string {
	if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
		name, _, _ := strings.Cut(strings.TrimSuffix(rest, "\n"), " ")
		return name
	}
	if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	name, _, _ := strings.Cut(line, " ")
	name, _, _ = strings.Cut(name, "{")
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, s); ok {
			return base
		}
	}
	return name
}
