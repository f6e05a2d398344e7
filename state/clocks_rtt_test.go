package state

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// PeerRTT, learned proximity's source: the median of the last acks' round
// trips, while the peer is heard.
func TestPeerRTT(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		rtts   []time.Duration
		heard  time.Duration // how long ago the last ack came
		want   time.Duration
		wantOK bool
	}{
		{name: "never heard"},
		{name: "one ack", rtts: []time.Duration{4 * ms}, want: 4 * ms, wantOK: true},
		{name: "one slow ack does not move it", rtts: []time.Duration{3 * ms, 3 * ms, 900 * ms, 4 * ms, 3 * ms}, want: 3 * ms, wantOK: true},
		{name: "only the last five count", rtts: []time.Duration{ms, ms, ms, 80 * ms, 80 * ms, 80 * ms, 80 * ms, 80 * ms}, want: 80 * ms, wantOK: true},
		{name: "gone quiet", rtts: []time.Duration{4 * ms}, heard: rttFresh + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clockBoard(t, "ews1", clockwork.NewFakeClock(), 0)
			at := time.Now().Add(-tt.heard)
			for _, rtt := range tt.rtts {
				c.clocks.record("ews2", 0, rtt, 0, 0, at)
			}
			got, ok := c.PeerRTT("ews2")
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("PeerRTT = %v %v, want %v %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
