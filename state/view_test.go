package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The /api/cluster row keeps its field names, and its runstate is a name.
func TestBoardJSON(t *testing.T) {
	b := Board{Name: "ews2", Rank: 1, Addr: "10.0.0.12:7946", HTTP: "10.0.0.12:8080", Linknum: 2, Capacity: 4, Weight: 1,
		Runstate: Overloaded, Load: Load{CPU: 0.5}, LastSeenMs: 40}
	out, err := json.Marshal(View{Epoch: 1, Master: "ews1", Version: 3, Self: "ews2", Nodes: []Board{b}, Queue: map[string]int{"control": 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"epoch":1,"master":"ews1","version":3,"self":"ews2","nodes":[{"name":"ews2","rank":1,"addr":"10.0.0.12:7946","http":"10.0.0.12:8080",` +
		`"linknum":2,"capacity":4,"weight":1,"runstate":"overloaded","load":{"cpu":0.5,"mem":0,"net":0,"disk":0,"disk_used":0,"net_pps":0,"disk_ops":0,"cpu_mhz":0,"mem_mb":0},"last_seen_ms":40}],"queue":{"control":1}}`
	if string(out) != want {
		t.Fatalf("JSON\n got %s\nwant %s", out, want)
	}
	var back View
	if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back.Nodes[0], b) {
		t.Fatalf("decoded %+v %v, want %+v", back.Nodes, err, b)
	}
	bad := strings.Replace(string(out), `"overloaded"`, `"asleep"`, 1)
	if err := json.Unmarshal([]byte(bad), &back); err == nil {
		t.Fatal("an unknown runstate name decoded")
	}
}
