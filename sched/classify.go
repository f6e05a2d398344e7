package sched

import (
	"fmt"
	"path"
	"strings"
)

// Classifier maps a request's method and path to its priority class with the
// precompiled [[sched.class]] rules: the first matching rule wins, the first
// class is the highest priority, and a request that matches nothing falls to
// the last class. Clients cannot choose their class: only method and path
// count. Safe for concurrent use; Classify does not allocate for clean paths.
type Classifier struct {
	names   []string
	weights []float64
	rules   []rule
}

// rule is one compiled "METHOD /path/glob" or "*".
type rule struct {
	class  int
	method string // "" = any method
	all    bool   // "*": every request
	segs   []seg
}

type segKind uint8

const (
	segLit   segKind = iota // literal segment
	segGlob                 // path.Match pattern within one segment (* ? [..])
	segStars                // "**": zero or more whole segments
)

type seg struct {
	kind segKind
	s    string
}

// NewClassifier compiles the classes' rules; no classes means the defaults.
func NewClassifier(classes []Class) (*Classifier, error) {
	if len(classes) == 0 {
		classes = DefaultClasses()
	}
	c := &Classifier{}
	sum := 0.0
	for i, cl := range classes {
		c.names = append(c.names, cl.Name)
		w := cl.Weight
		if !(w >= 0) || w > 1e9 { // NaN, negative, absurd
			w = 0
		}
		c.weights = append(c.weights, w)
		sum += w
		for _, m := range cl.Match {
			r, err := compileRule(m)
			if err != nil {
				return nil, fmt.Errorf("sched: class %q: %w", cl.Name, err)
			}
			r.class = i
			c.rules = append(c.rules, r)
		}
	}
	if sum <= 0 { // weights left out or all zero: every class counts 1
		for i := range c.weights {
			c.weights[i] = 1
		}
	}
	return c, nil
}

// CheckRule validates a class rule: "*", or "METHOD /path-glob" where
// METHOD is upper case or "*".
func CheckRule(rule string) error {
	if strings.TrimSpace(rule) == "*" {
		return nil
	}
	method, path, ok := strings.Cut(strings.TrimSpace(rule), " ")
	path = strings.TrimSpace(path)
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return fmt.Errorf("rule %q: want \"*\" or \"METHOD /path/glob\"", rule)
	}
	if method != "*" && strings.ToUpper(method) != method {
		return fmt.Errorf("rule %q: method must be upper case or *", rule)
	}
	return nil
}

func compileRule(m string) (rule, error) {
	if err := CheckRule(m); err != nil {
		return rule{}, err
	}
	m = strings.TrimSpace(m)
	if m == "*" {
		return rule{all: true}, nil
	}
	method, glob, _ := strings.Cut(m, " ")
	glob = strings.TrimSpace(glob)
	r := rule{method: method}
	if method == "*" {
		r.method = ""
	}
	for _, s := range strings.Split(strings.TrimPrefix(glob, "/"), "/") {
		switch {
		case s == "**":
			r.segs = append(r.segs, seg{kind: segStars})
		case strings.ContainsAny(s, "*?[\\"):
			if _, err := path.Match(s, ""); err != nil {
				return rule{}, fmt.Errorf("rule %q: bad glob segment %q: %w", m, s, err)
			}
			r.segs = append(r.segs, seg{kind: segGlob, s: s})
		default:
			r.segs = append(r.segs, seg{kind: segLit, s: s})
		}
	}
	return r, nil
}

// Classify returns the class index of a request. A path with "." or ".."
// segments or doubled slashes is cleaned first, so "/api/devices/../x"
// cannot borrow the control class.
func (c *Classifier) Classify(method, p string) int {
	if needsClean(p) {
		p = path.Clean("/" + p)
	}
	rest := strings.TrimPrefix(p, "/")
	for i := range c.rules {
		r := &c.rules[i]
		if r.all {
			return r.class
		}
		if r.method != "" && r.method != method {
			continue
		}
		if matchSegs(r.segs, rest, true) {
			return r.class
		}
	}
	return len(c.names) - 1
}

// Len is the number of classes.
func (c *Classifier) Len() int { return len(c.names) }

// Name is the name of class i ("" when out of range).
func (c *Classifier) Name(i int) string {
	if i < 0 || i >= len(c.names) {
		return ""
	}
	return c.names[i]
}

// Names returns the class names, highest priority first.
func (c *Classifier) Names() []string { return append([]string(nil), c.names...) }

// Weight is the qsc weight of class i.
func (c *Classifier) Weight(i int) float64 {
	if i < 0 || i >= len(c.weights) {
		return 1
	}
	return c.weights[i]
}

func needsClean(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return true
	}
	return strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..")
}

// cutSeg splits the first segment off p; more is false when it was the last.
func cutSeg(p string) (first, rest string, more bool) {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:], true
	}
	return p, "", false
}

// matchSegs matches compiled segments against the path p (without its
// leading slash); have is false once every path segment was consumed.
func matchSegs(segs []seg, p string, have bool) bool {
	for len(segs) > 0 {
		s := segs[0]
		if s.kind == segStars {
			segs = segs[1:]
			if len(segs) == 0 {
				return true
			}
			for {
				if matchSegs(segs, p, have) {
					return true
				}
				if !have {
					return false
				}
				_, p, have = cutSeg(p)
			}
		}
		if !have {
			return false
		}
		first, rest, more := cutSeg(p)
		switch s.kind {
		case segLit:
			if first != s.s {
				return false
			}
		case segGlob:
			if ok, _ := path.Match(s.s, first); !ok {
				return false
			}
		}
		segs, p, have = segs[1:], rest, more
	}
	return !have
}
