package node

import (
	"testing"
)

// qsc's paper weighs four request classes 1 < 2 < 4 < 8 (publish,
// execution unit, dynamic page, multimedia): a file with policy "qsc" and
// no [[sched.class]] gets them; written classes replace them; other
// policies keep the two defaults.
func TestQSCClassesByDefault(t *testing.T) {
	tests := []struct {
		name, toml string
		want       map[string]float64
	}{
		{"qsc, no classes", "[sched]\npolicy = \"qsc\"\n", map[string]float64{"control": 2, "media": 8, "dynamic": 4, "static": 1}},
		{"qsc, written classes", "[sched]\npolicy = \"qsc\"\n[[sched.class]]\nname = \"all\"\nmatch = [\"*\"]\nweight = 3\n", map[string]float64{"all": 3}},
		{"lc, no classes", "[sched]\npolicy = \"lc\"\n", map[string]float64{"control": 1, "browse": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("t.toml", []byte("[http]\nauth = \"none\"\n"+tt.toml))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, cl := range schedConfig(c).Classes {
				got[cl.Name] = cl.Weight
			}
			if len(got) != len(tt.want) {
				t.Fatalf("classes %v, want %v", got, tt.want)
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("class %s weight %v, want %v (all: %v)", n, got[n], w, got)
				}
			}
		})
	}
}
