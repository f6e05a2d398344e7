package bootconf

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// lastBoard exists only in this test file: registering it here, and
// nothing else, must make it valid in a config and selectable.
type lastBoard struct{}

// Select picks the board of the highest rank.
func (lastBoard) Select(pool []*sched.Board, _ *sched.Request) *sched.Board {
	var best *sched.Board
	for _, b := range pool {
		if best == nil || b.Rank > best.Rank {
			best = b
		}
	}
	return best
}

func init() {
	sched.RegisterPolicy(sched.PolicySpec{Name: "test-last-board", Queue: sched.PriorityQueues,
		New: func(sched.Config, *rand.Rand) sched.Policy { return lastBoard{} }})
}

func TestRegisteredPolicyIsConfigurable(t *testing.T) {
	const head = "[http]\nauth = \"none\"\n[sched]\n"
	cfg, err := parseConfig("ews.toml", []byte(head+"policy = \"test-last-board\"\n"))
	if err != nil {
		t.Fatalf("a registered policy is refused: %v", err)
	}
	if !strings.Contains(config.Example(sched.PolicyNames()...), "test-last-board") {
		t.Error("config init does not list the registered policy")
	}
	_, err = parseConfig("ews.toml", []byte(head+"policy = \"test-unregistered\"\n"))
	if err == nil || !strings.Contains(err.Error(), "test-last-board") {
		t.Errorf("an unknown policy must be refused with the registered names, got %v", err)
	}

	d, err := sched.NewDispatcher(schedConfig(cfg), sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Update([]state.Board{
		{Name: "a", Rank: 0, HTTP: "a:8080", Capacity: 2, Runstate: state.Running, Linknum: -1},
		{Name: "c", Rank: 2, HTTP: "c:8080", Capacity: 2, Runstate: state.Running, Linknum: -1},
		{Name: "b", Rank: 1, HTTP: "b:8080", Capacity: 2, Runstate: state.Running, Linknum: -1},
	})
	want := []string{"c", "c", "b"} // c until full, then the next rank
	var held []sched.Ticket
	for i, w := range want {
		tk, err := d.Acquire(context.Background(), &sched.Request{Class: 1})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, tk)
		if tk.Board != w {
			t.Errorf("dispatch %d went to %s, want %s", i, tk.Board, w)
		}
	}
	for _, tk := range held {
		tk.Done()
	}
}
