package rollout

import (
	"strings"
	"testing"
)

func TestOrder(t *testing.T) {
	v := View{Master: "ews1", Nodes: []Board{{Name: "ews1", Rank: 0}, {Name: "ews2", Rank: 1}, {Name: "ews3", Rank: 2}, {Name: "ews4", Rank: 3}}}
	for _, tc := range []struct{ last, want string }{
		{"", "ews4,ews3,ews2,ews1"},
		{"ews1", "ews4,ews3,ews2,ews1"},
		{"ews3", "ews4,ews2,ews1,ews3"},
	} {
		var got []string
		for _, b := range Order(v, tc.last) {
			got = append(got, b.Name)
		}
		if s := strings.Join(got, ","); s != tc.want {
			t.Errorf("last %q: %s, want %s", tc.last, s, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		v    View
		want string
	}{
		{View{Master: "ews1", Nodes: []Board{{Name: "ews1", Runstate: "running"}}}, ""},
		{View{Nodes: []Board{{Name: "ews1", Runstate: "running"}}}, "no master"},
		{View{Master: "ews1", Nodes: []Board{{Name: "ews1", Runstate: "running"}, {Name: "ews2", Runstate: "down"}}}, "ews2 is down"},
	} {
		err := Check(tc.v)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.v, err, tc.want)
		}
	}
}
