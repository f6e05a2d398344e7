package config

import (
	"slices"
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
	p := &parser{starts: lineStarts(data)}
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.ArrayTable:
			name := arrayPath(keyParts(e.Key()), counts)
			i := counts[name]
			counts[name] = i + 1
			prefix = name + "[" + strconv.Itoa(i) + "]"
			out = append(out, keyAt(p, prefix, e.Key()))
		case unstable.Table:
			prefix = arrayPath(keyParts(e.Key()), counts)
			out = append(out, keyAt(p, prefix, e.Key()))
		case unstable.KeyValue:
			out = keyValuePositions(p, prefix, e, out)
		}
	}
	return out
}

// keyValuePositions records a key = value at prefix, the keys of an inline
// table value below it, and the elements of an array value.
func keyValuePositions(p *parser, prefix string, kv *unstable.Node, out []keyPos) []keyPos {
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
			line, col := p.at(c.Raw)
			out = append(out, keyPos{Path: key + "[" + strconv.Itoa(i) + "]", Line: line, Col: col})
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
func keyAt(p *parser, path string, it unstable.Iterator) keyPos {
	if !it.Next() {
		return keyPos{Path: path}
	}
	line, col := p.at(it.Node().Raw)
	return keyPos{Path: path, Line: line, Col: col}
}

// parser is go-toml's parser with the document's line starts: at finds a
// node's line by binary search, where the parser's own Shape counts the
// newlines from the start of the document on every call (quadratic over
// a document's keys).
type parser struct {
	unstable.Parser
	starts []int // the offset of each line's first byte
}

// lineStarts lists the offset of each line's first byte.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// at is the 1-based line and column (in bytes) where r starts.
func (p *parser) at(r unstable.Range) (line, col int) {
	off := int(r.Offset)
	i, found := slices.BinarySearch(p.starts, off)
	if !found {
		i-- // inside line i (0-based)
	}
	return i + 1, off - p.starts[i] + 1
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

// positions is keyPositions of one document, indexed by path: find is a
// map lookup per ancestor, so reporting every key of a document of n keys
// costs O(n), not O(n²) (a list scanned per key took 13 s on 250 KB of
// unknown keys).
type positions struct {
	all   []keyPos          // file order
	first map[string]keyPos // path -> where it was first written
}

// indexPositions indexes ps.
func indexPositions(ps []keyPos) positions {
	first := make(map[string]keyPos, len(ps))
	for _, kp := range ps {
		if _, seen := first[kp.Path]; !seen {
			first[kp.Path] = kp
		}
	}
	return positions{all: ps, first: first}
}

// find is where key was first written; a key the file does not spell out
// (a list element, an inline table's part) falls back to its parent.
func (ps positions) find(key string) (line, col int) {
	for key != "" {
		if kp, ok := ps.first[key]; ok {
			return kp.Line, kp.Col
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0, 0
}
