package users

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// lagging is one board's view of a log another board writes to: while
// held, the versions the log commits reach this board's store only when
// it writes itself (a raft board's Apply returns once it applied the log
// up to its entry: durable.Raft.Apply's WaitIndex).
type lagging struct {
	*durable.Alone
	mu      sync.Mutex
	held    bool
	pending []func()
}

func (l *lagging) Watch(kind string, f func(durable.Document)) {
	l.Alone.Watch(kind, func(d durable.Document) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.held {
			l.pending = append(l.pending, func() { f(d) })
			return
		}
		f(d)
	})
}

func (l *lagging) Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error) {
	v, err := l.Alone.Apply(ctx, kind, data, expect)
	l.mu.Lock()
	p := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, f := range p {
		f()
	}
	return v, err
}

// A refusal (404 no such user, 409 exists) is decided on the board's own
// copy, which may lag the log: a master paused for a second, back,
// answered 404 for a user created while it slept (TestLinearizable's
// history checker, docs/NOTES.md "Linearizability and the simulator").
// The copy is brought up to the log before a refusal is answered.
func TestRefusalsAreTheLogs(t *testing.T) {
	type req struct{ method, path, body string }
	create := req{"POST", "/api/users", `{"name":"u1","role":"viewer"}`}
	del := req{"DELETE", "/api/users/u1", ""}
	for _, c := range []struct {
		name   string
		before []req // on the board that keeps up
		seen   int   // how many of them the board behind took
		then   req   // on the board behind
		want   int
	}{
		{"delete a user made elsewhere", []req{create}, 0, del, http.StatusOK},
		{"make a user deleted elsewhere", []req{create, del}, 1, create, http.StatusCreated},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := durable.NewAlone(nil)
			lag := &lagging{Alone: log}
			behind := fixture(t, Options{State: lag})
			ahead := fixture(t, Options{State: log})
			for i, r := range c.before {
				if i == c.seen {
					lag.mu.Lock()
					lag.held = true
					lag.mu.Unlock()
				}
				if code, m := call(t, ahead, root, r.method, r.path, r.body); code >= 300 {
					t.Fatalf("%s %s on the board ahead: %d %v", r.method, r.path, code, m)
				}
			}
			if code, m := call(t, behind, root, c.then.method, c.then.path, c.then.body); code != c.want {
				t.Fatalf("%s %s on the board behind: %d %v, want %d", c.then.method, c.then.path, code, m, c.want)
			}
		})
	}
}
