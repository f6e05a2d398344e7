package e2e

import (
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// linHistory records the operations of TestLinearizable's clients, each
// with its call and return (nanoseconds since the history began) and its
// answer, one list per model; safe for concurrent use.
type linHistory struct {
	start time.Time
	mu    sync.Mutex
	ops   map[string][]porcupine.Operation
	// unknown counts the indeterminate operations per model; refusals the
	// operations not recorded because their board refused the connection.
	unknown  map[string]int
	refusals int
}

func newLinHistory() *linHistory {
	return &linHistory{start: time.Now(), ops: map[string][]porcupine.Operation{}, unknown: map[string]int{}}
}

func (h *linHistory) now() int64 { return int64(time.Since(h.start)) }

// record adds one operation of model: an unknown outcome returns at the
// end of time, so a linearization may put it anywhere after its call.
func (h *linHistory) record(model string, client int, in any, call int64, out linOut, meta string) {
	ret := h.now()
	if out.unknown() {
		ret = math.MaxInt64
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops[model] = append(h.ops[model], porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret, Metadata: meta})
	if out.unknown() {
		h.unknown[model]++
	}
}

// refused counts an operation whose board refused the connection.
func (h *linHistory) refused() {
	h.mu.Lock()
	h.refusals++
	h.mu.Unlock()
}

// of returns model's operations and how many were indeterminate.
func (h *linHistory) of(model string) ([]porcupine.Operation, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops[model]...), h.unknown[model]
}
