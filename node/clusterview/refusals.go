package clusterview

import (
	"sync"
	"time"

	"github.com/ews-firmware/ews/state"
)

// refusalTTL is how long a board stays marked auth_mismatch after the last
// forwarded request it refused with 401.
const refusalTTL = time.Minute

// refusals remembers when each board last refused credentials this master
// accepted (dispatch.Options.OnAuthRefused). Safe for concurrent use.
type refusals struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (r *refusals) seen(board string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	r.last[board] = now
}

// mark sets AuthMismatch on the boards of v that refused within refusalTTL
// of now, and forgets older refusals.
func (r *refusals) mark(v state.View, now time.Time) state.View {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.last {
		if now.Sub(t) > refusalTTL {
			delete(r.last, name)
		}
	}
	if len(r.last) == 0 {
		return v
	}
	for i := range v.Nodes {
		if _, ok := r.last[v.Nodes[i].Name]; ok {
			v.Nodes[i].AuthMismatch = true
		}
	}
	return v
}
