package config

import (
	"fmt"
	"strings"
)

// MaxTableKeys bounds the keys one table (the document's root included)
// holds. The widest table of Config has a few dozen keys; the bound is
// there for the TOML decoder, whose duplicate-key tracker scans every key
// it has seen for each new one (quadratic over one wide table): a
// document past it is refused with the line of the first key too many,
// before it is decoded, so checking any document stays linear in its size.
const MaxTableKeys = 1024

// wideTables reports each table of pos with more than MaxTableKeys keys
// of its own (a dotted key's parts count as keys of their tables; the
// elements of an array of tables, [[device]], count once each in their
// own table, not in the array's).
func wideTables(pos []keyPos) Errors {
	seen := make(map[string]bool, len(pos))
	counts := map[string]int{}
	var errs Errors
	for _, kp := range pos {
		for p := kp.Path; p != "" && !seen[p]; {
			seen[p] = true
			i := strings.LastIndexAny(p, ".[")
			parent := ""
			if i >= 0 {
				parent = p[:i]
			}
			if i < 0 || p[i] == '.' { // an element ("device[3]") is no key of its array
				counts[parent]++
				if counts[parent] == MaxTableKeys+1 {
					name := parent
					if name == "" {
						name = "the document's root"
					}
					errs = append(errs, &Error{Line: kp.Line, Col: kp.Col, Key: parent,
						Msg: fmt.Sprintf("%s holds more than %d keys (no table of the config has nearly so many): refused before decoding", name, MaxTableKeys)})
				}
			}
			p = parent
		}
	}
	return errs
}

// Wide is the problems of wideTables in a document (file names it): nil
// when every table is within MaxTableKeys. Whoever decodes TOML of a
// client's before ParseAll runs it first.
func Wide(file string, data []byte) Errors {
	errs := wideTables(keyPositions(data))
	if len(errs) == 0 {
		return nil
	}
	return withFile(file, errs)
}
