package access

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/users"
)

// fakeUsers knows one operator by token.
type fakeUsers struct{ op *users.Principal }

func (f fakeUsers) Token(tok string) (any, string, uint64, bool) {
	if tok == "op-token" {
		return f.op, f.op.Name, 1, true
	}
	return nil, "", 0, false
}
func (fakeUsers) Password(string, string) (any, uint64, bool) { return nil, 0, false }
func (fakeUsers) Session(string, uint64) (any, bool)          { return nil, false }
func (fakeUsers) Seed(string, string, bool) []byte            { return nil }

// Through the board's own door and the credentials check: a rule acts
// as the board (admin), labelled rule:N, its keys its own; an MQTT command
// acts as the ews user [mqtt] user names; an operator is no admin; a
// board credential of an earlier rotation is replaced by the current one.
func TestDoorWhoAndAdminOnly(t *testing.T) {
	op := &users.Principal{Name: "op1", Role: "operator"}
	au, err := auth.New(auth.Config{Mode: "token", Token: "ewsb_now"}, auth.Options{Users: fakeUsers{op}})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ who, key, actor, authz string }
	var got seen
	inner := au.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = seen{Who(r).Name, KeyOwner(r), r.Header.Get(HeaderActor), r.Header.Get("Authorization")}
		AdminOnly(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	}))
	door := Door(DoorOptions{Handler: func() http.Handler { return inner }, BoardCred: func() string { return "ewsb_now" }, BoardCredPrefix: "ewsb_",
		MQTTUser: func() string { return "op1" }, User: func(n string) *users.Principal {
			if n == op.Name {
				return op
			}
			return nil
		}})
	tests := []struct {
		name, agent, token string
		want               seen
		code               int
	}{
		{"a rule", "ews-rule-2", "ewsb_then", seen{users.Root().Name, "actor:rule:2", "rule:2", "Bearer ewsb_now"}, http.StatusOK},
		{"MQTT as op1", "ews-mqtt", "ewsb_now", seen{"op1", "actor:mqtt:op1", "mqtt:op1", "Bearer ewsb_now"}, http.StatusForbidden},
		{"an operator's own token", "curl", "op-token", seen{"op1", "user:op1", "", "Bearer op-token"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/devices/relay1/toggle", nil)
			r.Header.Set("User-Agent", tt.agent)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			r.Header.Set(HeaderActor, "forged")
			w := httptest.NewRecorder()
			door.ServeHTTP(w, r)
			if got != tt.want || w.Code != tt.code {
				t.Errorf("saw %+v, %d %s; want %+v, %d", got, w.Code, strings.TrimSpace(w.Body.String()), tt.want, tt.code)
			}
		})
	}
}
