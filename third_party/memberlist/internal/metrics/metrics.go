// Package metrics stands in for github.com/hashicorp/go-metrics in ews's copy of memberlist:
// the same calls, doing nothing. ews never set a go-metrics sink, so upstream's calls went to
// its default blackhole sink; its own gossip counters are in state (ews_gossip_*).
package metrics

import "time"

// Label is go-metrics' Label.
type Label struct {
	Name  string
	Value string
}

func IncrCounterWithLabels(key []string, val float32, labels []Label)      {}
func SetGaugeWithLabels(key []string, val float32, labels []Label)         {}
func AddSampleWithLabels(key []string, val float32, labels []Label)        {}
func MeasureSinceWithLabels(key []string, start time.Time, labels []Label) {}
