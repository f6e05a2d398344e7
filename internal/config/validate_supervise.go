package config

import "fmt"

// validateSuperviseNames refuses two [[supervise]] entries of one name: the
// name is what logs and restarts go by.
func (c *Config) validateSuperviseNames(bad func(string, string, ...any)) {
	first := map[string]int{}
	for i, s := range c.Supervise {
		if s.Name == "" {
			continue
		}
		c.once(bad, first, fmt.Sprintf("supervise[%d].name", i), "supervise name", s.Name, i, "supervise[%d].name")
	}
}

// once refuses name at key when an earlier entry of its list has it
// (seen: each name and the index of its first entry, added to), naming
// the first's line (linePat: its key for an index).
func (c *Config) once(bad func(string, string, ...any), seen map[string]int, key, what, name string, i int, linePat string) {
	if j, dup := seen[name]; dup {
		bad(key, "duplicate %s %q (first defined on line %d)", what, name, c.Lines[fmt.Sprintf(linePat, j)])
		return
	}
	seen[name] = i
}
