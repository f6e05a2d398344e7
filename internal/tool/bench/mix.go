package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Class is one kind of request of the mix: its share of the arrivals and what is sent.
type Class struct {
	Name   string
	Weight float64 // normalised: the weights of a mix add up to 1
	Method string
	Path   string // starts with "/", may carry a query
}

// ParseMix parses NAME=WEIGHT:METHOD PATH[,NAME=WEIGHT:METHOD PATH...] and normalises the
// weights. Its errors say which entry is wrong and why.
func ParseMix(s string) ([]Class, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("bench: --mix is empty; want NAME=WEIGHT:METHOD PATH[,...], e.g. %q", exampleMix)
	}
	var classes []Class
	seen := map[string]bool{}
	sum := 0.0
	for i, entry := range strings.Split(s, ",") {
		c, err := parseClass(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("bench: --mix entry %d %q: %w", i+1, entry, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("bench: --mix entry %d %q: class %q appears twice", i+1, entry, c.Name)
		}
		seen[c.Name] = true
		sum += c.Weight
		classes = append(classes, c)
	}
	if math.IsInf(sum, 0) {
		return nil, fmt.Errorf("bench: --mix weights add up to infinity")
	}
	for i := range classes {
		classes[i].Weight /= sum
	}
	return classes, nil
}

// exampleMix works against `make demo` (temp1 is one of its devices), with
// exampleHeader.
const exampleMix = "control=0.25:POST /api/devices/temp1/read,browse=0.75:GET /"

// exampleHeader is the credential of the demo (internal/tool/demo.Token).
const exampleHeader = "Authorization: Bearer demo-token"

func parseClass(e string) (Class, error) {
	if e == "" {
		return Class{}, fmt.Errorf("empty entry (stray comma?)")
	}
	name, rest, ok := strings.Cut(e, "=")
	if !ok {
		return Class{}, fmt.Errorf("missing '=': want NAME=WEIGHT:METHOD PATH")
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return Class{}, fmt.Errorf("empty class name before '='")
	}
	if strings.ContainsAny(name, " \t:") {
		return Class{}, fmt.Errorf("class name %q has a space or ':'", name)
	}
	ws, req, ok := strings.Cut(rest, ":")
	if !ok {
		return Class{}, fmt.Errorf("missing ':' after the weight: want NAME=WEIGHT:METHOD PATH")
	}
	w, err := strconv.ParseFloat(strings.TrimSpace(ws), 64)
	if err != nil {
		return Class{}, fmt.Errorf("weight %q is not a number", ws)
	}
	if !(w > 0) || math.IsInf(w, 0) {
		return Class{}, fmt.Errorf("weight %q must be a positive finite number", ws)
	}
	fields := strings.Fields(req)
	if len(fields) != 2 {
		return Class{}, fmt.Errorf("request %q: want METHOD PATH, e.g. \"GET /\"", req)
	}
	method, path := fields[0], fields[1]
	if !validMethod(method) {
		return Class{}, fmt.Errorf("method %q: want an upper-case HTTP method such as GET or POST", method)
	}
	if !strings.HasPrefix(path, "/") {
		return Class{}, fmt.Errorf("path %q must start with '/'", path)
	}
	return Class{Name: name, Weight: w, Method: method, Path: path}, nil
}

// validMethod accepts upper-case RFC 9110 tokens (GET, POST, PROPFIND...).
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, r := range m {
		if (r < 'A' || r > 'Z') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// String gives the class back in --mix syntax (with its normalised weight).
func (c Class) String() string {
	return c.Name + "=" + strconv.FormatFloat(c.Weight, 'g', 4, 64) + ":" + c.Method + " " + c.Path
}
