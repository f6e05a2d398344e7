package sched

import (
	"testing"
)

func TestClassify(t *testing.T) {
	classes := []Class{
		{Name: "control", Match: []string{"* /api/devices/**", "* /cgi-bin/**"}},
		{Name: "status", Match: []string{"GET /api/*/status", "POST /data/*.json"}},
		{Name: "browse", Match: []string{"GET /**"}},
		{Name: "rest", Match: []string{"PUT /nothing"}},
	}
	c, err := NewClassifier(classes)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, want string
	}{
		{"device action", "POST", "/api/devices/relay1/turn_on", "control"},
		{"device list", "GET", "/api/devices", "control"},
		{"device list slash", "GET", "/api/devices/", "control"},
		{"cgi", "GET", "/cgi-bin/x.sh", "control"},
		{"prefix is not a segment", "GET", "/api/devicesX", "browse"},
		{"glob in segment", "GET", "/api/board1/status", "status"},
		{"glob needs one segment", "GET", "/api/a/b/status", "browse"},
		{"method counts", "POST", "/api/board1/status", "rest"},
		{"suffix glob", "POST", "/data/t.json", "status"},
		{"suffix glob miss", "POST", "/data/t.xml", "rest"},
		{"root", "GET", "/", "browse"},
		{"unknown path falls to last", "DELETE", "/zzz", "rest"},
		{"dot-dot cannot borrow control", "GET", "/api/devices/../../index.html", "browse"},
		{"double slash cleaned", "POST", "//api//devices/x", "control"},
		{"no leading slash", "GET", "api/devices/x", "control"},
		{"empty path", "GET", "", "browse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Name(c.Classify(tt.method, tt.path)); got != tt.want {
				t.Errorf("Classify(%s %s) = %s, want %s", tt.method, tt.path, got, tt.want)
			}
		})
	}
}

func TestClassifyDefaultsAndStar(t *testing.T) {
	c, err := NewClassifier(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); len(got) != 2 || got[0] != "control" || got[1] != "browse" {
		t.Fatalf("default classes = %v", got)
	}
	if got := c.Name(c.Classify("GET", "/index.html")); got != "browse" {
		t.Errorf("page: %s", got)
	}
	if got := c.Name(c.Classify("POST", "/api/devices/r/toggle")); got != "control" {
		t.Errorf("control: %s", got)
	}
}

func TestClassifierRejectsBadRules(t *testing.T) {
	for _, m := range []string{"GET", "get /x", "GET /[", ""} {
		if _, err := NewClassifier([]Class{{Name: "a", Match: []string{m}}}); err == nil {
			t.Errorf("rule %q accepted", m)
		}
	}
}

func TestClassifyWeights(t *testing.T) {
	c, _ := NewClassifier([]Class{{Name: "a", Match: []string{"*"}}, {Name: "b", Match: []string{"*"}}})
	if c.Weight(0) != 1 || c.Weight(1) != 1 {
		t.Errorf("weights left out must count 1, got %v %v", c.Weight(0), c.Weight(1))
	}
	c, _ = NewClassifier([]Class{{Name: "a", Match: []string{"*"}, Weight: 3}, {Name: "b", Match: []string{"*"}, Weight: -1}})
	if c.Weight(0) != 3 || c.Weight(1) != 0 {
		t.Errorf("weights = %v %v, want 3 0", c.Weight(0), c.Weight(1))
	}
}

func TestClassifyAllocs(t *testing.T) {
	c, _ := NewClassifier([]Class{
		{Name: "control", Match: []string{"* /api/devices/**", "* /cgi-bin/*.sh"}},
		{Name: "browse", Match: []string{"*"}},
	})
	n := testing.AllocsPerRun(100, func() {
		c.Classify("POST", "/api/devices/relay1/turn_on")
		c.Classify("GET", "/cgi-bin/run.sh")
		c.Classify("GET", "/static/app.js")
	})
	if n != 0 {
		t.Errorf("Classify allocates %v times per run", n)
	}
}

// Without configured classes, qsc classifies into the paper's four (a
// device action is the execution unit, weight 2; an API query a dynamic
// page, 4; a file static, 1), every other policy into the two defaults.
func TestClassesForQSC(t *testing.T) {
	tests := []struct {
		policy, method, path, class string
		weight                      float64
	}{
		{"qsc", "POST", "/api/devices/r1/toggle", "control", 2},
		{"qsc", "GET", "/api/history", "dynamic", 4},
		{"qsc", "GET", "/app.js", "static", 1},
		{"lc", "GET", "/api/history", "browse", 1},
	}
	for _, tt := range tests {
		d, err := NewDispatcher(Config{Policy: tt.policy}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cls := d.Classifier()
		c := cls.Classify(tt.method, tt.path)
		if got := cls.Name(c); got != tt.class {
			t.Errorf("%s %s %s: class %q, want %q", tt.policy, tt.method, tt.path, got, tt.class)
		}
		if got := cls.Weight(c); got != tt.weight {
			t.Errorf("%s %s %s: weight %v, want %v", tt.policy, tt.method, tt.path, got, tt.weight)
		}
	}
}
