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
		if j, dup := first[s.Name]; dup {
			bad(fmt.Sprintf("supervise[%d].name", i), "duplicate supervise name %q (first defined on line %d)", s.Name, c.Lines[fmt.Sprintf("supervise[%d].name", j)])
			continue
		}
		first[s.Name] = i
	}
}
