package node

import (
	"context"
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/node/audit"
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
	n.acc.acct.audit.Sync(context.Background())
	got, err := n.acc.acct.audit.Query(audit.Filter{Limit: 10})
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
