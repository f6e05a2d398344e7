package boardrevoke

import (
	"context"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// noQuorum is a log on a side without a majority: every write refused.
type noQuorum struct{ *durable.Alone }

func (noQuorum) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}

func TestAdd(t *testing.T) {
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		add     []string
		want    map[string]bool
		entries int
	}{
		{"none", nil, map[string]bool{"ews3": false}, 0},
		{"one", []string{"ews3"}, map[string]bool{"ews3": true, "ews1": false}, 1},
		{"twice is once", []string{"ews3", "ews3"}, map[string]bool{"ews3": true}, 1},
		{"two", []string{"ews3", "ews2"}, map[string]bool{"ews3": true, "ews2": true, "ews1": false}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := durable.NewAlone(nil)
			l := New(st, nil)
			changes := 0
			l.OnChange(func() { changes++ })
			for _, b := range tt.add {
				if _, err := l.Add(context.Background(), Entry{Board: b, By: "admin", At: at}); err != nil {
					t.Fatalf("Add(%s): %v", b, err)
				}
			}
			for b, want := range tt.want {
				if got := l.Revoked(b); got != want {
					t.Errorf("Revoked(%s) = %v, want %v", b, got, want)
				}
			}
			if got := len(l.Entries()); got != tt.entries {
				t.Errorf("%d entries, want %d", got, tt.entries)
			}
			if changes != tt.entries {
				t.Errorf("%d changes seen, want %d", changes, tt.entries)
			}
			// another board of the same log starts from the committed list
			if other := New(st, nil); len(other.Entries()) != tt.entries {
				t.Errorf("a new reader holds %d entries, want %d", len(other.Entries()), tt.entries)
			}
		})
	}
}

func TestAddRefused(t *testing.T) {
	l := New(noQuorum{durable.NewAlone(nil)}, nil)
	_, err := l.Add(context.Background(), Entry{Board: "ews3"})
	if !durable.IsNoQuorum(err) {
		t.Fatalf("Add without a majority: %v, want no quorum", err)
	}
	if l.Revoked("ews3") {
		t.Error("revoked without a commit")
	}
	if _, err := l.Add(context.Background(), Entry{}); err == nil {
		t.Errorf("Add of no board: %v, want an error", err)
	}
	var nilList *List
	if nilList.Revoked("ews3") {
		t.Error("a nil list revokes")
	}
}
