package bench

import (
	"math"
	"strings"
	"testing"
)

func TestParseMixGood(t *testing.T) {
	tests := []struct {
		in   string
		want []Class
	}{
		{exampleMix, []Class{
			{Name: "control", Weight: 0.25, Method: "POST", Path: "/api/devices/temp1/read"},
			{Name: "browse", Weight: 0.75, Method: "GET", Path: "/"},
		}},
		{"a=1:GET /x", []Class{{Name: "a", Weight: 1, Method: "GET", Path: "/x"}}},
		{" a = 3 : GET  /x?y=1 , b=1:DELETE /z ", []Class{
			{Name: "a", Weight: 0.75, Method: "GET", Path: "/x?y=1"},
			{Name: "b", Weight: 0.25, Method: "DELETE", Path: "/z"},
		}},
		{"c=2:PUT /a,d=2:GET /b", []Class{
			{Name: "c", Weight: 0.5, Method: "PUT", Path: "/a"},
			{Name: "d", Weight: 0.5, Method: "GET", Path: "/b"},
		}},
		{"x=1e-3:GET /", []Class{{Name: "x", Weight: 1, Method: "GET", Path: "/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMix(tt.in)
			if err != nil {
				t.Fatalf("ParseMix: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d classes %v, want %v", len(got), got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Name != w.Name || g.Method != w.Method || g.Path != w.Path || math.Abs(g.Weight-w.Weight) > 1e-12 {
					t.Errorf("class %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestParseMixBad(t *testing.T) {
	tests := []struct {
		in, want string // want: a piece of the error message
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"control", "missing '='"},
		{"=1:GET /", "empty class name"},
		{"a b=1:GET /", "has a space"},
		{"a=1 GET /", "missing ':'"},
		{"a=x:GET /", "not a number"},
		{"a=0:GET /", "positive"},
		{"a=-1:GET /", "positive"},
		{"a=NaN:GET /", "positive"},
		{"a=Inf:GET /", "positive"},
		{"a=1:GET", "want METHOD PATH"},
		{"a=1:/x", "want METHOD PATH"},
		{"a=1:GET / extra", "want METHOD PATH"},
		{"a=1:get /", "upper-case"},
		{"a=1:G!T /", "upper-case"},
		{"a=1:GET x", "must start with '/'"},
		{"a=1:GET /,", "entry 2"},
		{"a=1:GET /,,b=1:GET /", "stray comma"},
		{"a=1:GET /,a=2:GET /b", "appears twice"},
		{"a=1e308:GET /,b=1e308:GET /", "infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMix(tt.in)
			if err == nil {
				t.Fatalf("ParseMix(%q) = %v, want an error with %q", tt.in, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "bench: ") {
				t.Errorf("error %q, want it to start with \"bench: \" and contain %q", err, tt.want)
			}
		})
	}
}
