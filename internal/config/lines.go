package config

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

var (
	tableRe      = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]\s*(#.*)?$`)
	arrayTableRe = regexp.MustCompile(`^\s*\[\[\s*([A-Za-z0-9_.\-]+)\s*\]\]\s*(#.*)?$`)
	keyRe        = regexp.MustCompile(`^\s*([A-Za-z0-9_\-]+)\s*=`)
)

// keyLines maps each key path of a TOML document to its 1-based line:
// "node.capacity", "device[0].name", "sched.class[1].match". Tables map too
// ("device[2]" is the line of its [[device]] header). It only needs to be
// right for well-formed files: the decoder has already refused the others.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	counts := map[string]int{}
	prefix := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	depth := 0 // open brackets of a multi-line array
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if depth > 0 {
			depth += bracketDelta(line)
			continue
		}
		if m := arrayTableRe.FindStringSubmatch(line); m != nil {
			name := arrayPath(m[1], counts)
			i := counts[name]
			counts[name] = i + 1
			prefix = name + "[" + strconv.Itoa(i) + "]"
			lines[prefix] = n
			continue
		}
		if m := tableRe.FindStringSubmatch(line); m != nil {
			prefix = arrayPath(m[1], counts)
			lines[prefix] = n
			continue
		}
		if m := keyRe.FindStringSubmatch(line); m != nil {
			key := m[1]
			if prefix != "" {
				key = prefix + "." + key
			}
			if _, seen := lines[key]; !seen {
				lines[key] = n
			}
			rest := line[len(m[0]):]
			if d := bracketDelta(rest); d > 0 {
				depth = d
			}
		}
	}
	return lines
}

// arrayPath resolves a dotted table name whose parents are arrays of
// tables to their latest element: [device.opts] after two [[device]] is
// "device[1].opts".
func arrayPath(name string, counts map[string]int) string {
	parts := strings.Split(name, ".")
	cur := ""
	for i, p := range parts {
		if cur != "" {
			cur += "."
		}
		cur += p
		if c, ok := counts[cur]; ok && i < len(parts)-1 {
			cur += "[" + strconv.Itoa(c-1) + "]"
		}
	}
	return cur
}

// bracketDelta counts [ minus ] outside strings and comments.
func bracketDelta(s string) int {
	d := 0
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#':
			return d
		case r == '[':
			d++
		case r == ']':
			d--
		}
	}
	return d
}
