package devsync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// BenchmarkApplyDeviceEvents parses and applies "device" frames as the hub
// writes them, alternating states so each one reaches OnChange.
func BenchmarkApplyDeviceEvents(b *testing.B) {
	const n = 1000
	var buf bytes.Buffer
	for i := range n {
		s := snap("r2", "ews2", []string{hal.StateOn, hal.StateOff}[i%2], time.Unix(int64(i), 0))
		data, err := json.Marshal(s)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&buf, "event: device\ndata: %s\n\n", data)
	}
	frames := buf.Bytes()
	changes := 0
	m := New("ews1", nil, Options{OnChange: func(hal.Snapshot) { changes++ }})
	b.ReportAllocs()
	b.SetBytes(int64(len(frames)))
	for b.Loop() {
		rd := newSSEReader(bytes.NewReader(frames), 1<<20, 1<<20, nil)
		for range n {
			ev, err := rd.next()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.apply("ews2", ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	if changes == 0 {
		b.Fatal("no change reached OnChange")
	}
}
