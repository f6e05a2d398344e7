package sched

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
)

// QueueMode is how the Dispatcher queues requests under a policy.
type QueueMode uint8

const (
	// PriorityQueues keeps a FIFO per class and serves the highest class
	// first (the paper's priority).
	PriorityQueues QueueMode = iota
	// OneFIFO keeps one FIFO for every class, in arrival order: control
	// requests wait behind page views (the paper's baseline).
	OneFIFO
)

// PolicySpec is one selectable value of Config.Policy. A policy file
// registers its spec from init; nothing else needs to know the name.
type PolicySpec struct {
	Name  string
	Queue QueueMode
	// New builds a fresh policy; rng seeds its random choices (nil: the
	// runtime's generator). Per-board state lives in the value it returns.
	New func(cfg Config, rng *rand.Rand) Policy
	// Check, when set, rejects configs the policy cannot work with.
	Check func(cfg Config) error
	// Load says the policy reads the boards' load figures (Board.Load):
	// the Dispatcher then corrects them for what it placed since each
	// report (Config.Stale). Proximity rules read them under any policy.
	Load bool
}

var registry struct {
	sync.RWMutex
	specs map[string]PolicySpec
}

// RegisterPolicy makes spec selectable by its name. It panics on an empty
// name, a nil constructor or a name taken already: call it from init.
func RegisterPolicy(spec PolicySpec) {
	if spec.Name == "" || spec.New == nil {
		panic("sched: RegisterPolicy needs a name and a constructor")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.specs[spec.Name]; dup {
		panic(fmt.Sprintf("sched: policy %q registered twice", spec.Name))
	}
	if registry.specs == nil {
		registry.specs = map[string]PolicySpec{}
	}
	registry.specs[spec.Name] = spec
}

// LookupPolicy returns the spec registered under name; "" is DefaultPolicy.
func LookupPolicy(name string) (PolicySpec, bool) {
	if name == "" {
		name = DefaultPolicy
	}
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.specs[name]
	return s, ok
}

// PolicyNames returns every registered policy name, sorted.
func PolicyNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(maps.Keys(registry.specs))
}

// CheckPolicy reports whether cfg names a registered policy and suits it
// (the policy's Check).
func CheckPolicy(cfg Config) error {
	spec, ok := LookupPolicy(cfg.Policy)
	if !ok {
		return fmt.Errorf("sched: unknown policy %q", cfg.Policy)
	}
	if spec.Check != nil {
		return spec.Check(cfg)
	}
	return nil
}

// CheckSticky reports whether mode is a Config.Sticky value.
func CheckSticky(mode string) error {
	switch mode {
	case "", StickyCookie, StickySourceIP:
		return nil
	}
	return fmt.Errorf("sched: sticky %q: want %s or %s", mode, StickyCookie, StickySourceIP)
}

// NewPolicy builds the policy named by cfg.Policy, wrapped in proximity
// (cfg.Proximity) and stickiness (cfg.Sticky) when configured. rng seeds
// the random choices (nil: the runtime's generator). Bad proximity entries
// are logged and ignored.
func NewPolicy(cfg Config, rng *rand.Rand, log *slog.Logger) (Policy, error) {
	if err := CheckPolicy(cfg); err != nil {
		return nil, err
	}
	if err := CheckSticky(cfg.Sticky); err != nil {
		return nil, err
	}
	spec, _ := LookupPolicy(cfg.Policy)
	p := spec.New(cfg, rng)
	if len(cfg.Proximity) > 0 {
		px := NewProximity(cfg.Proximity, p, log)
		px.Rand = rng
		if _, ok := p.(*Integrated); !ok {
			px.Model = NewIntegrated(cfg.Integrated) // the paper scores by integrated load
			px.Model.Two = cfg.Stale == StaleTwo
		}
		p = px
	}
	if cfg.Sticky != "" {
		p = &Sticky{Mode: cfg.Sticky, Next: p}
	}
	return p, nil
}
