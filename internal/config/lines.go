package config

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps each key path of a TOML document to its 1-based line:
// "node.capacity", "device[0].name", "sched.class[1].match". Tables map too
// ("device[2]" is the line of its [[device]] header). Positions come from
// go-toml's own parser, so dotted (a.b = 1), quoted ("a.b" = 1) and inline
// ({a = 1}) keys map like any other. A file the parser refuses maps what it
// read before the error: the decoder reports that error with its position.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	counts := map[string]int{}
	prefix := ""
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.ArrayTable:
			name := arrayPath(keyParts(e.Key()), counts)
			i := counts[name]
			counts[name] = i + 1
			prefix = name + "[" + strconv.Itoa(i) + "]"
			lines[prefix] = keyLine(&p, e.Key())
		case unstable.Table:
			prefix = arrayPath(keyParts(e.Key()), counts)
			lines[prefix] = keyLine(&p, e.Key())
		case unstable.KeyValue:
			keyValueLines(&p, prefix, e, lines)
		}
	}
	return lines
}

// keyValueLines records a key = value at prefix, and the keys of an inline
// table value below it.
func keyValueLines(p *unstable.Parser, prefix string, kv *unstable.Node, lines map[string]int) {
	key := join(prefix, strings.Join(keyParts(kv.Key()), "."))
	if _, seen := lines[key]; !seen {
		lines[key] = keyLine(p, kv.Key())
	}
	if v := kv.Value(); v.Kind == unstable.InlineTable {
		for it := v.Children(); it.Next(); {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				keyValueLines(p, key, c, lines)
			}
		}
	}
}

// keyParts is the unquoted parts of a dotted key.
func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// keyLine is the line of a key's first part.
func keyLine(p *unstable.Parser, it unstable.Iterator) int {
	if !it.Next() {
		return 0
	}
	return p.Shape(it.Node().Raw).Start.Line
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// arrayPath resolves a dotted table name whose parents are arrays of
// tables to their latest element: [device.opts] after two [[device]] is
// "device[1].opts".
func arrayPath(parts []string, counts map[string]int) string {
	cur := ""
	for i, part := range parts {
		cur = join(cur, part)
		if c, ok := counts[cur]; ok && i < len(parts)-1 {
			cur += "[" + strconv.Itoa(c-1) + "]"
		}
	}
	return cur
}
