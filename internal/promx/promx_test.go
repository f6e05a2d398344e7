package promx

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "ews_test_total", Help: "test"}
	first := Register(reg, prometheus.NewCounter(opts))
	first.Add(2)
	second := Register(reg, prometheus.NewCounter(opts))
	if second != first {
		t.Fatal("a second registration under the same name did not return the first collector")
	}
	clash := Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "ews_test_total", Help: "other"}))
	if clash == nil {
		t.Fatal("clashing collector: want it returned unregistered, got nil")
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Fatalf("registry holds %v (err %v), want the one counter at 2", mfs, err)
	}
	if c := Register[prometheus.Counter](nil, first); c != first {
		t.Fatal("nil registerer must hand back the collector")
	}
}
