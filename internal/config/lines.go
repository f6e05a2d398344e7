package config

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyPos is where one key path is written: its 1-based line and column.
type keyPos struct {
	Path      string
	Line, Col int
}

// keyLines maps each key path of a TOML document to its 1-based line:
// "node.capacity", "device[0].name", "sched.class[1].match". Tables map too
// ("device[2]" is the line of its [[device]] header), and so do the elements
// of an array value ("cluster.peers[1]"). Positions come from go-toml's own
// parser, so dotted (a.b = 1), quoted ("a.b" = 1) and inline ({a = 1}) keys
// map like any other. A key written twice maps to its first line. A file the
// parser refuses maps what it read before the error: the decoder reports
// that error with its position.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	for _, kp := range keyPositions(data) {
		if _, seen := lines[kp.Path]; !seen {
			lines[kp.Path] = kp.Line
		}
	}
	return lines
}

// keyPositions lists every key path of a document in file order, a key
// written twice once for each time.
func keyPositions(data []byte) []keyPos {
	var out []keyPos
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
			out = append(out, keyAt(&p, prefix, e.Key()))
		case unstable.Table:
			prefix = arrayPath(keyParts(e.Key()), counts)
			out = append(out, keyAt(&p, prefix, e.Key()))
		case unstable.KeyValue:
			out = keyValuePositions(&p, prefix, e, out)
		}
	}
	return out
}

// keyValuePositions records a key = value at prefix, the keys of an inline
// table value below it, and the elements of an array value.
func keyValuePositions(p *unstable.Parser, prefix string, kv *unstable.Node, out []keyPos) []keyPos {
	key := join(prefix, strings.Join(keyParts(kv.Key()), "."))
	out = append(out, keyAt(p, key, kv.Key()))
	switch v := kv.Value(); v.Kind {
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				out = keyValuePositions(p, key, c, out)
			}
		}
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); i++ {
			c := it.Node()
			if c.Raw.Length == 0 {
				continue // arrays and inline tables carry no position of their own
			}
			s := p.Shape(c.Raw).Start
			out = append(out, keyPos{Path: key + "[" + strconv.Itoa(i) + "]", Line: s.Line, Col: s.Column})
		}
	}
	return out
}

// keyParts is the unquoted parts of a dotted key.
func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// keyAt is path at the position of the key's first part.
func keyAt(p *unstable.Parser, path string, it unstable.Iterator) keyPos {
	if !it.Next() {
		return keyPos{Path: path}
	}
	s := p.Shape(it.Node().Raw).Start
	return keyPos{Path: path, Line: s.Line, Col: s.Column}
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

// positions is keyPositions of one document.
type positions []keyPos

// find is where key was first written; a key the file does not spell out
// (a list element, an inline table's part) falls back to its parent.
func (ps positions) find(key string) (line, col int) {
	for key != "" {
		for _, kp := range ps {
			if kp.Path == key {
				return kp.Line, kp.Col
			}
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0, 0
}
