package state

import "testing"

func TestRevokedSender(t *testing.T) {
	onList := func(name string) bool { return name == "ews3" }
	tests := []struct {
		name    string
		revoked func(string) bool
		m       Message
		refused bool
	}{
		{"report of a revoked board", onList, &ReportMsg{Name: "ews3"}, true},
		{"table of a revoked master", onList, &TableMsg{Master: "ews3"}, true},
		{"intro naming a revoked board", onList, &IntroMsg{Name: "ews3"}, true},
		{"report of another board", onList, &ReportMsg{Name: "ews1"}, false},
		{"no list", nil, &ReportMsg{Name: "ews3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{}
			if tt.revoked != nil {
				c.SetRevoked(tt.revoked)
			}
			if err := c.revokedSender(tt.m); (err != nil) != tt.refused {
				t.Errorf("revokedSender = %v, want refused %v", err, tt.refused)
			}
		})
	}
}

func TestMarkRevoked(t *testing.T) {
	v := View{Nodes: []Board{{Name: "ews1", Runstate: Running}, {Name: "ews3", Runstate: Running}}}
	got := MarkRevoked(v, func(name string) bool { return name == "ews3" })
	if got.Nodes[0].Runstate != Running || got.Nodes[1].Runstate != Revoked {
		t.Fatalf("runstates %v %v, want running revoked", got.Nodes[0].Runstate, got.Nodes[1].Runstate)
	}
	b, err := Revoked.MarshalText()
	if err != nil || string(b) != "revoked" {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	var back Runstate
	if err := back.UnmarshalText(b); err != nil || back != Revoked {
		t.Fatalf("UnmarshalText = %v, %v", back, err)
	}
	if Revoked.Valid() {
		t.Error("revoked is valid on the wire")
	}
}
