package guard

import (
	"net/http/httptest"
	"testing"
)

func TestSimCost(t *testing.T) {
	tests := []struct {
		target string
		want   float64
	}{
		{"/", 1},
		{"/?sim_cost=4", 4},
		{"/assets/x/app.js?sim_cost=16", 16},
		{"/?sim_cost=17", 1}, // out of range: one page
		{"/?sim_cost=0", 1},
		{"/?sim_cost=-2", 1},
		{"/?sim_cost=lots", 1},
		{"/?other=3", 1},
	}
	for _, tt := range tests {
		if got := simCost(httptest.NewRequest("GET", tt.target, nil)); got != tt.want {
			t.Errorf("simCost(%q) = %v, want %v", tt.target, got, tt.want)
		}
	}
}
