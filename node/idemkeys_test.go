package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/audit"
)

// TestIdempotencyKeysPerPrincipal: a user's Idempotency-Key is its own.
// An operator that sends a rule's key first used to block the rule's
// action (422: the key "was used" for the operator's request); now the
// rule, the admin and the operator each have their own.
func TestIdempotencyKeysPerPrincipal(t *testing.T) {
	n, base, _, _ := startNode(t, accountsConfig(t))
	code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"op1","role":"operator","devices":["relay*"]}`), bearer)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/users = %d %v", code, m)
	}
	op := map[string]string{"Authorization": "Bearer " + m["token"].(string), "Idempotency-Key": "rule-0-back"}
	if code, _, m := getJSON(t, "POST", base+"/api/devices/relay1/turn_on", nil, op); code != http.StatusOK {
		t.Fatalf("op1 turns relay1 on with the rule's key: %d %v", code, m)
	}
	door := n.actorDoor()
	r := httptest.NewRequest("POST", "/api/devices/led1/turn_off", nil)
	r.Header.Set("User-Agent", "ews-rule-0")
	r.Header.Set("Authorization", bearer["Authorization"])
	r.Header.Set("Idempotency-Key", "rule-0-back")
	w := httptest.NewRecorder()
	door.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Errorf("the rule's turn-back after op1 used its key: %d %s, want 200", w.Code, w.Body)
	}
	admin := map[string]string{"Authorization": bearer["Authorization"], "Idempotency-Key": "rule-0-back"}
	if code, _, m := getJSON(t, "POST", base+"/api/devices/led1/toggle", nil, admin); code != http.StatusOK {
		t.Errorf("the admin with op1's key: %d %v, want 200", code, m)
	}
	if code, _, m := getJSON(t, "POST", base+"/api/devices/relay1/turn_on", nil, op); code != http.StatusOK {
		t.Errorf("op1's retry: %d %v, want its answer again", code, m)
	}
	if code, _, _ := getJSON(t, "POST", base+"/api/devices/relay1/turn_off", nil, op); code != http.StatusUnprocessableEntity {
		t.Errorf("op1's key for another request: %d, want 422", code)
	}
}

// TestTurnBackReportedInTheAuditLog: the rules engine's reports of a
// refused turn-back reach the audit log as rule.turn_back.
func TestTurnBackReportedInTheAuditLog(t *testing.T) {
	n, _, _, _ := startNode(t, accountsConfig(t))
	access.TurnBack(n.acc.acct.Audit)(actuate.Command{Device: "pump1", Kind: hal.TurnOff, Origin: "rule-3"}, 1, &actuate.Error{Status: 422, Msg: "used"})
	n.acc.acct.Audit.Sync(context.Background())
	got, err := n.acc.acct.Audit.Query(audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.User == "rule:3" && e.Action == "rule.turn_back" && e.Target == "pump1 turn_off" && e.Result == 422 {
			return
		}
	}
	t.Errorf("audit %+v: want rule:3 rule.turn_back pump1 turn_off 422", got)
}
