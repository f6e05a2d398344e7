package node

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/rotate"
)

// TestActorHeaderStripped: a client's X-Ews-Actor does not name the
// audit log's user (it used to, for any holder of the bundle token); the
// automation's own label still does.
func TestActorHeaderStripped(t *testing.T) {
	n, base, _, _ := startNode(t, accountsConfig(t))
	hdr := map[string]string{"Authorization": bearer["Authorization"], HeaderActor: "rule:9"}
	if code, _, m := getJSON(t, "POST", base+"/api/devices/relay1/toggle", nil, hdr); code != http.StatusOK {
		t.Fatalf("toggle: %d %v", code, m)
	}
	n.acc.acct.Audit.Sync(context.Background())
	got, err := n.acc.acct.Audit.Query(audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.Action == "device.toggle" && e.Target == "relay1" {
			if e.User == "rule:9" {
				t.Fatalf("audit user %q: the client's X-Ews-Actor was believed", e.User)
			}
			return
		}
	}
	t.Fatalf("no device.toggle relay1 in %+v", got)
}

// The automation's requests carry the board credential of the rotation
// the board is on, whatever generation its rules were built with; a
// user's token passes as it is.
func TestActorDoorSendsTheCurrentBoardCredential(t *testing.T) {
	n := &Node{log: slog.New(slog.DiscardHandler)}
	n.acc.rotate = rotate.NewModule(rotate.ModuleOptions{BoardCred: "ewsb_generation2"})
	var got string
	n.web.handler = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") })
	for sent, want := range map[string]string{
		"Bearer ewsb_generation0": "Bearer ewsb_generation2",
		"Bearer ewsb_generation1": "Bearer ewsb_generation2",
		"Bearer ews_usertoken":    "Bearer ews_usertoken",
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/devices/relay1/turn_on", nil)
		r.Header.Set("User-Agent", "ews-rule-1")
		r.Header.Set("Authorization", sent)
		n.actorDoor().ServeHTTP(httptest.NewRecorder(), r)
		if got != want {
			t.Errorf("sent %q: the door passed %q, want %q", sent, got, want)
		}
	}
}

// A board whose config names a state_dir that is not made yet (its first
// start) keeps the rotation's secrets there, where its next start, the dir
// made by then, looks for them; before, the first start chose the file
