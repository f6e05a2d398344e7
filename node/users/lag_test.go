package users

import (
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/durable/durabletest"
)

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
			lag := &durabletest.Lagging{Alone: log, ApplyCatchesUp: true}
			behind := fixture(t, Options{State: lag})
			ahead := fixture(t, Options{State: log})
			for i, r := range c.before {
				if i == c.seen {
					lag.Hold()
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
