package promx

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func scrape(r *Registry) string {
	var b bytes.Buffer
	r.WritePrometheus(&b)
	return b.String()
}

func TestRebuiltComponentKeepsCounting(t *testing.T) {
	reg := NewRegistry()
	first := reg.Counter("ews_test_total", "test")
	first.Add(2)
	if second := reg.Counter("ews_test_total", "test"); second != first {
		t.Fatal("a second registration under the same name did not return the first counter")
	}
	v1 := reg.CounterVec("ews_test_by_total", "test", "b", "a")
	v1.WithLabelValues("x", "y").Inc()
	v2 := reg.CounterVec("ews_test_by_total", "test", "b", "a")
	v2.WithLabelValues("x", "y").Inc()
	if got, _ := reg.Value(`ews_test_by_total{a="y",b="x"}`); got != 2 {
		t.Fatalf("shared labelled counter = %v, want 2\n%s", got, scrape(reg))
	}
	clash := reg.Gauge("ews_test_total", "other")
	if clash == nil {
		t.Fatal("clashing gauge: want one returned unregistered, got nil")
	}
	clash.Set(7)
	if got, ok := reg.Value("ews_test_total"); !ok || got != 2 {
		t.Fatalf("registry shows %v (%v), want the one counter at 2", got, ok)
	}
	reg.GaugeFunc("ews_test_fn", "fn", nil, func() float64 { return 4 })
	reg.Gauge("ews_test_fn", "settable").Set(1) // must not panic nor change the func gauge
	if got, _ := reg.Value("ews_test_fn"); got != 4 {
		t.Fatalf("func gauge = %v, want 4", got)
	}
	var none *Registry
	c := none.Counter("ews_test_total", "test")
	c.Inc()
	if c.Get() != 1 || none.Has("ews_test_total") {
		t.Fatal("a nil registry must hand back a working, unregistered counter")
	}
}

func TestRegistriesAreApart(t *testing.T) {
	a, b := NewRegistry(), NewRegistry()
	a.Counter("ews_x_total", "x").Inc()
	b.Counter("ews_x_total", "x").Add(5)
	if va, _ := a.Value("ews_x_total"); va != 1 {
		t.Fatalf("a = %v, want 1", va)
	}
	if vb, _ := b.Value("ews_x_total"); vb != 5 {
		t.Fatalf("b = %v, want 5", vb)
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(r *Registry)
		want  []string
	}{
		{"counter with help", func(r *Registry) { r.Counter("ews_c_total", "Things done.").Inc() },
			[]string{"# HELP ews_c_total Things done.\n# TYPE ews_c_total counter\news_c_total 1\n"}},
		{"labels sorted and escaped", func(r *Registry) {
			r.CounterVec("ews_l_total", "l", "zeta", "alpha").WithLabelValues(`a"b\c`, "one\ntwo").Inc()
		}, []string{`ews_l_total{alpha="one\ntwo",zeta="a\"b\\c"} 1` + "\n"}},
		{"settable gauge", func(r *Registry) { g := r.Gauge("ews_g", "g"); g.Set(3); g.Dec() },
			[]string{"# TYPE ews_g gauge\news_g 2\n"}},
		{"gauge func, the last callback wins", func(r *Registry) {
			r.GaugeFunc("ews_info", "i", map[string]string{"version": "1", "arch": "arm"}, func() float64 { return 0 })
			r.GaugeFunc("ews_info", "i", map[string]string{"version": "1", "arch": "arm"}, func() float64 { return 1 })
		}, []string{`ews_info{arch="arm",version="1"} 1` + "\n"}},
		{"histogram buckets", func(r *Registry) {
			h := r.HistogramVec("ews_h_seconds", "h", []float64{50e-6, .5, 1}, "path")
			h.WithLabelValues("ui").Update(.25)
			h.WithLabelValues("ui").Update(2)
		}, []string{
			"# TYPE ews_h_seconds histogram\n",
			`ews_h_seconds_bucket{path="ui",le="5e-05"} 0` + "\n" +
				`ews_h_seconds_bucket{path="ui",le="0.5"} 1` + "\n" +
				`ews_h_seconds_bucket{path="ui",le="1"} 1` + "\n" +
				`ews_h_seconds_bucket{path="ui",le="+Inf"} 2` + "\n" +
				`ews_h_seconds_sum{path="ui"} 2.25` + "\n" +
				`ews_h_seconds_count{path="ui"} 2` + "\n",
		}},
		{"process metrics", func(r *Registry) { r.WithProcessMetrics() },
			[]string{"# TYPE go_goroutines gauge\n", "\nprocess_resident_memory_bytes "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			tt.build(r)
			got := scrape(r)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("scrape lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestLint(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(r *Registry)
		want  []string
	}{
		{"clean", func(r *Registry) {
			r.Counter("ews_ok_total", "ok").Inc()
			r.Gauge("ews_ok_bytes", "ok")
			r.HistogramVec("ews_ok_seconds", "ok", []float64{1}, "op").WithLabelValues("x").Update(1)
		}, nil},
		{"counter without _total", func(r *Registry) { r.Counter("ews_done", "d") }, []string{`ews_done: counter metrics should have "_total" suffix`}},
		{"gauge with _total", func(r *Registry) { r.Gauge("ews_held_total", "h") }, []string{`ews_held_total: non-counter metrics should not have "_total" suffix`}},
		{"no help", func(r *Registry) { r.Gauge("ews_quiet", "") }, []string{"ews_quiet: no help text"}},
		{"camel case", func(r *Registry) { r.Gauge("ews_fooBar", "f") }, []string{"ews_fooBar: metric names should be written in 'snake_case' not 'camelCase'"}},
		{"camel label", func(r *Registry) { r.GaugeVec("ews_g", "g", "opName").WithLabelValues("a") }, []string{"opName: label names should be written in 'snake_case' not 'camelCase'"}},
		{"unit", func(r *Registry) { r.Gauge("ews_wait_milliseconds", "w") }, []string{`ews_wait_milliseconds: use base unit instead of "milliseconds"`}},
		{"reserved suffix", func(r *Registry) { r.Gauge("ews_queue_count", "q") }, []string{`ews_queue_count: non-histogram metrics should not have "_count" suffix`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			tt.build(r)
			got := Lint(r)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Lint = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWithLabelValuesAllocs: looking up a series that exists allocates
// nothing (labelled counters are touched on every forwarded request), with
// one to three labels; a new series still counts from zero.
func TestWithLabelValuesAllocs(t *testing.T) {
	r := NewRegistry()
	for _, labels := range [][]string{{"board"}, {"board", "outcome"}, {"board", "outcome", "kind"}} {
		v := r.CounterVec("ews_allocs_"+strconv.Itoa(len(labels))+"_total", "test", labels...)
		values := []string{"ews1", "ok", "x"}[:len(labels)]
		v.WithLabelValues(values...).Inc()
		if n := testing.AllocsPerRun(100, func() { v.WithLabelValues(values...).Inc() }); n != 0 {
			t.Errorf("%d labels: %v allocs per lookup", len(labels), n)
		}
		if got := v.WithLabelValues(values...).Get(); got != 102 {
			t.Errorf("%d labels: counter %d, want 102", len(labels), got)
		}
		if got := v.WithLabelValues(append([]string{"ews2"}, values[1:]...)...).Get(); got != 0 {
			t.Errorf("%d labels: a new series starts at %d", len(labels), got)
		}
	}
}
