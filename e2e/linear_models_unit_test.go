package e2e

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The models judge known histories as they must: each case is a small
// history by hand, and whether it is linearizable. So TestLinearizable's
// "yes" is one the checker could have said "no" to.
func TestLinearizableModels(t *testing.T) {
	const inf = math.MaxInt64
	op := func(client int, in any, call int64, out linOut, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	for _, c := range []struct {
		name  string
		model porcupine.Model
		ops   []porcupine.Operation
		want  porcupine.CheckResult
	}{
		{"users: create, then a duplicate", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(1, linUser{"create", "a"}, 20, linOut{Code: 409}, 30),
		}, porcupine.Ok},
		{"users: a deleted user found again", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(1, linUser{"delete", "a"}, 20, linOut{Code: 200}, 30),
			op(0, linUser{"create", "a"}, 40, linOut{Code: 409}, 50),
		}, porcupine.Illegal},
		{"users: an unknown delete may have happened", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(1, linUser{"delete", "a"}, 20, linOut{}, inf),
			op(0, linUser{"create", "a"}, 40, linOut{Code: 201}, 50),
		}, porcupine.Ok},
		{"users: rotate a user made, not one deleted", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(1, linUser{"rotate", "a"}, 20, linOut{Code: 200}, 30),
			op(0, linUser{"delete", "a"}, 40, linOut{Code: 200}, 50),
			op(1, linUser{"rotate", "a"}, 60, linOut{Code: 404}, 70),
		}, porcupine.Ok},
		{"users: a rotation of a deleted user", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(0, linUser{"delete", "a"}, 20, linOut{Code: 200}, 30),
			op(1, linUser{"rotate", "a"}, 40, linOut{Code: 200}, 50),
		}, porcupine.Illegal},
		{"users: keys apart", usersModel, []porcupine.Operation{
			op(0, linUser{"create", "a"}, 0, linOut{Code: 201}, 10),
			op(1, linUser{"create", "b"}, 0, linOut{Code: 201}, 10),
		}, porcupine.Ok},
		{"config: two puts from one version, one wins", configModel(1), []porcupine.Operation{
			op(0, linConfig{1}, 0, linOut{Code: 200, Ver: 2}, 10),
			op(1, linConfig{1}, 0, linOut{Code: 412}, 10),
		}, porcupine.Ok},
		{"config: both win (a lost update)", configModel(1), []porcupine.Operation{
			op(0, linConfig{1}, 0, linOut{Code: 200, Ver: 2}, 10),
			op(1, linConfig{1}, 0, linOut{Code: 200, Ver: 2}, 10),
		}, porcupine.Illegal},
		{"config: a 412 for the current version", configModel(1), []porcupine.Operation{
			op(0, linConfig{1}, 0, linOut{Code: 412}, 10),
		}, porcupine.Illegal},
		{"relay: on, then read on", relayModel(false), []porcupine.Operation{
			op(0, linRelay{"turn_on"}, 0, linOut{Code: 200, On: true}, 10),
			op(1, linRelay{"read"}, 20, linOut{Code: 200, On: true}, 30),
		}, porcupine.Ok},
		{"relay: a stale read after the action's answer", relayModel(false), []porcupine.Operation{
			op(0, linRelay{"turn_on"}, 0, linOut{Code: 200, On: true}, 10),
			op(1, linRelay{"read"}, 20, linOut{Code: 200, On: false}, 30),
		}, porcupine.Illegal},
		{"relay: an unknown toggle overlapping a read", relayModel(false), []porcupine.Operation{
			op(0, linRelay{"toggle"}, 0, linOut{}, inf),
			op(1, linRelay{"read"}, 20, linOut{Code: 200, On: true}, 30),
			op(1, linRelay{"read"}, 40, linOut{Code: 200, On: true}, 50),
		}, porcupine.Ok},
		{"revoke: one of three, then the second refused", revokeModel(3), []porcupine.Operation{
			op(0, linRevoke{"ews2"}, 0, linOut{Code: 200, At: "t1"}, 10),
			op(1, linRevoke{"ews3"}, 20, linOut{Code: 409}, 30),
			op(2, linRevoke{"ews2"}, 40, linOut{Code: 200, At: "t1"}, 50),
		}, porcupine.Ok},
		{"revoke: two of three (a majority) both answered 200", revokeModel(3), []porcupine.Operation{
			op(0, linRevoke{"ews2"}, 0, linOut{Code: 200, At: "t1"}, 10),
			op(1, linRevoke{"ews3"}, 0, linOut{Code: 200, At: "t2"}, 10),
		}, porcupine.Illegal},
		{"revoke: again, with another time than the first", revokeModel(3), []porcupine.Operation{
			op(0, linRevoke{"ews2"}, 0, linOut{Code: 200, At: "t1"}, 10),
			op(1, linRevoke{"ews2"}, 20, linOut{Code: 200, At: "t2"}, 30),
		}, porcupine.Illegal},
		{"revoke: refused while nothing is revoked", revokeModel(5), []porcupine.Operation{
			op(0, linRevoke{"ews2"}, 0, linOut{Code: 403}, 10),
		}, porcupine.Illegal},
		{"revoke: an unknown one may have happened and refused the next", revokeModel(3), []porcupine.Operation{
			op(0, linRevoke{"ews2"}, 0, linOut{}, inf),
			op(1, linRevoke{"ews3"}, 20, linOut{Code: 409}, 30),
			op(1, linRevoke{"ews2"}, 40, linOut{Code: 200, At: "t9"}, 50),
			op(1, linRevoke{"ews2"}, 60, linOut{Code: 200, At: "t9"}, 70),
		}, porcupine.Ok},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(c.model, c.ops, 0); got != c.want {
				t.Fatalf("checked %v, want %v", got, c.want)
			}
		})
	}
}

// A history the checker refuses is saved where EWS_VERIFY_OUT says:
// porcupine's HTML page (its operations in a JSON literal, ">" escaped),
// and its operations as JSON beside it.
func TestLinSave(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EWS_VERIFY_OUT", dir)
	ops := []porcupine.Operation{
		{ClientId: 0, Input: linRelay{"turn_on"}, Call: 0, Output: linOut{Code: 200, On: true}, Return: 10},
		{ClientId: 1, Input: linRelay{"read"}, Call: 20, Output: linOut{Code: 200, On: false}, Return: 30},
	}
	m := relayModel(false)
	res, info := porcupine.CheckOperationsVerbose(m, ops, 0)
	if res != porcupine.Illegal {
		t.Fatalf("checked %v, want illegal", res)
	}
	page := linSave(t, "relay", 9, m, info, ops)
	html, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(html), "read -\\u003e off") {
		t.Fatalf("the page %s: %v, holds the operations: %v", page, err, strings.Contains(string(html), "read -\\u003e off"))
	}
	if _, err := os.Stat(strings.TrimSuffix(page, ".html") + ".json"); err != nil {
		t.Fatal(err)
	}
}

// An unknown PUT from a version another PUT was answered the next of is
// left out; one whose next version nobody was answered stays.
func TestPruneConfig(t *testing.T) {
	ops := []porcupine.Operation{
		{ClientId: 0, Input: linConfig{1}, Output: linOut{Code: 200, Ver: 2}},
		{ClientId: 1, Input: linConfig{1}, Output: linOut{Error: "503"}},
		{ClientId: 2, Input: linConfig{2}, Output: linOut{Error: "timeout"}},
		{ClientId: 3, Input: linConfig{1}, Output: linOut{Code: 412}},
	}
	kept, pruned := pruneConfig(ops)
	if pruned != 1 || len(kept) != 3 || kept[1].ClientId != 2 {
		t.Fatalf("pruned %d, kept %+v; want the unknown PUT from 1 left out, the one from 2 kept", pruned, kept)
	}
	if len(ops) != 4 || ops[1].ClientId != 1 {
		t.Fatal("pruneConfig changed its input")
	}
}
