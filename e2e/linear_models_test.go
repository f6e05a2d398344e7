package e2e

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The models the histories of TestLinearizable are checked against, one
// per store (docs/NOTES.md "Linearizability and the simulator"). An
// operation whose outcome the client could not learn (503, a timeout, a
// refused connection, any answer outside the model's) is indeterminate:
// its output is unknown, its return at the end of time, and the model
// lets it take effect at any point after its call or not at all (a
// linearization may put it last), as Jepsen and etcd's robustness tests
// keep an unknown outcome as "may have happened".

// linOut is an operation's answer: the HTTP status (0: unknown) and what
// the model reads from its body.
type linOut struct {
	Code int
	On   bool   // relay: the state the answer says
	Ver  uint64 // config: the new version (ETag)
	At   string `json:",omitempty"` // revoke: the entry's time, the first revocation's
	// Error is the answer's "error" (not read by the models: for a person
	// looking at a failing history).
	Error string `json:",omitempty"`
}

func (o linOut) unknown() bool { return o.Code == 0 }

// linUser is an operation on one user of the users store.
type linUser struct {
	Op   string // create | delete | rotate
	Name string
}

// usersModel is a register per user: whether it exists. Create answers
// 201 when it did not (and makes it) or 409 when it did; delete 200 when
// it did (and removes it) or 404 when it did not; rotate (a new token)
// 200 when it did, 404 when it did not, and changes nothing of the
// register.
var usersModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(linUser).Name
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return false },
	Step: func(state, input, output any) (bool, any) {
		exists, in, out := state.(bool), input.(linUser), output.(linOut)
		switch {
		case in.Op == "create" && out.unknown():
			return true, true
		case in.Op == "create":
			return (out.Code == 201 && !exists) || (out.Code == 409 && exists), true
		case in.Op == "rotate":
			return out.unknown() || (out.Code == 200 && exists) || (out.Code == 404 && !exists), exists
		case out.unknown():
			return true, false
		default:
			return (out.Code == 200 && exists) || (out.Code == 404 && !exists), false
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linUser), output.(linOut)
		return fmt.Sprintf("%s %s -> %s", in.Op, in.Name, codeText(out))
	},
	DescribeState: func(state any) string { return map[bool]string{true: "exists", false: "absent"}[state.(bool)] },
}

// linConfig is a PUT /api/config made from version Expect (If-Match).
type linConfig struct{ Expect uint64 }

// configModel is a compare-and-set register, the configuration's
// version: a PUT answers 200 with ETag Expect+1 when the version was
// Expect (and moves it there), 412 when it was not.
func configModel(init uint64) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			v, in, out := state.(uint64), input.(linConfig), output.(linOut)
			switch {
			case out.unknown() && v == in.Expect:
				return true, v + 1
			case out.unknown():
				return true, v
			case out.Code == 200:
				return v == in.Expect && out.Ver == v+1, out.Ver
			default: // 412
				return v != in.Expect, v
			}
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(linConfig), output.(linOut)
			if out.Code == 200 {
				return fmt.Sprintf("put if %d -> 200 v%d", in.Expect, out.Ver)
			}
			return fmt.Sprintf("put if %d -> %s", in.Expect, codeText(out))
		},
		DescribeState: func(state any) string { return fmt.Sprintf("v%d", state.(uint64)) },
	}
}

// pruneConfig leaves out the PUTs whose outcome is unknown but which
// cannot have happened, and returns how many: a PUT from version N makes
// N+1 if it makes anything, and only one PUT can make N+1 (the log's
// compare-and-set), so when another PUT was answered 200 with ETag N+1, an
// unknown one from N did not happen (as etcd's robustness tests patch a
// failed write they can show did not persist). Kept in, every such PUT may
// take effect at any point until the end of time, and porcupine's search
// over them grew past 23 GB on a 5-minute history (6,000 PUTs, 300
// unknown) before it answered.
func pruneConfig(ops []porcupine.Operation) ([]porcupine.Operation, int) {
	made := map[uint64]bool{}
	for _, op := range ops {
		if out := op.Output.(linOut); out.Code == 200 {
			made[out.Ver] = true
		}
	}
	kept := ops[:0:0]
	for _, op := range ops {
		if op.Output.(linOut).unknown() && made[op.Input.(linConfig).Expect+1] {
			continue
		}
		kept = append(kept, op)
	}
	return kept, len(ops) - len(kept)
}

// linRelay is an action on the relay: turn_on, turn_off, toggle or read.
type linRelay struct{ Op string }

// relayModel is a register, the relay's state: turn_on and turn_off set
// it, toggle flips it, and each answers the state after; read answers it.
func relayModel(init bool) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			on, in, out := state.(bool), input.(linRelay), output.(linOut)
			next := on
			switch in.Op {
			case "turn_on":
				next = true
			case "turn_off":
				next = false
			case "toggle":
				next = !on
			}
			if out.unknown() {
				return true, next
			}
			return out.Code == 200 && out.On == next, next
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(linRelay), output.(linOut)
			if out.Code == 200 {
				return fmt.Sprintf("%s -> %s", in.Op, map[bool]string{true: "on", false: "off"}[out.On])
			}
			return fmt.Sprintf("%s -> %s", in.Op, codeText(out))
		},
		DescribeState: func(state any) string { return map[bool]string{true: "on", false: "off"}[state.(bool)] },
	}
}

func codeText(o linOut) string {
	if o.unknown() {
		return "unknown (" + o.Error + ")"
	}
	if o.Error != "" {
		return fmt.Sprintf("%d %s", o.Code, o.Error)
	}
	return fmt.Sprint(o.Code)
}
