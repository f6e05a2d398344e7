package state

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// A master's step-down is heard even when its leave was handled first;
// nothing else of a board that left is, nor a step-down from a board that
// never was a member or left long ago.
func TestFromMemberStepDownAfterLeave(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(d *delegate, c *Cluster)
		msg     Message
		refused bool
	}{
		{"member", func(d *delegate, _ *Cluster) { d.setAddr("ews1", "127.0.0.1:7946") },
			&TableMsg{Master: "ews1"}, false},
		{"step-down just after its leave", func(d *delegate, _ *Cluster) {
			d.setAddr("ews1", "127.0.0.1:7946")
			d.setAddr("ews1", "")
		}, &StepDownMsg{Name: "ews1", Epoch: 1}, false},
		{"a table after its leave", func(d *delegate, _ *Cluster) {
			d.setAddr("ews1", "127.0.0.1:7946")
			d.setAddr("ews1", "")
		}, &TableMsg{Master: "ews1"}, true},
		{"step-down of a board never a member", func(*delegate, *Cluster) {},
			&StepDownMsg{Name: "ews1", Epoch: 1}, true},
		{"step-down tmax after its leave", func(d *delegate, c *Cluster) {
			d.setAddr("ews1", "127.0.0.1:7946")
			d.setAddr("ews1", "")
			c.mem.left["ews1"] = time.Now().Add(-c.timing.TMax)
		}, &StepDownMsg{Name: "ews1", Epoch: 1}, true},
		{"step-down of a board that left and joined again", func(d *delegate, _ *Cluster) {
			d.setAddr("ews1", "127.0.0.1:7946")
			d.setAddr("ews1", "")
			d.setAddr("ews1", "127.0.0.1:7946")
		}, &StepDownMsg{Name: "ews1", Epoch: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{mem: membership{addrs: map[string]string{}}, timing: Timing{TMax: time.Hour}}
			c.self.Name = "ews2"
			c.mem.ml.Store(&memberlist.Memberlist{}) // gossip started: membership counts
			d := &delegate{c: c}
			tt.setup(d, c)
			err := c.fromMember(tt.msg)
			if tt.refused != (err != nil) {
				t.Fatalf("%T refused = %v (err %v), want %v", tt.msg, err != nil, err, tt.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "not a member") {
				t.Errorf("err = %v, want it to say the sender is not a member", err)
			}
		})
	}
}
