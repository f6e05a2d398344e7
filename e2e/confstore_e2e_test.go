package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestConfigStoreBar is the configuration store on three real boards
// (docs/NOTES.md "Configuration store"): a PUT through ews1 adding a
// sim-switch on ews3 reaches every board's copy (version 2, with the
// device); an unknown driver gets 400 naming it, a stale If-Match 412, a
// viewer 403, and none changes anything. Devices are not applied live
// (the answer lists "device" in restart_needed): after every board
// restarts, the device is in GET /api/devices of every board and toggles
// through the master. A rollback to version 1 and another restart of
// every board remove it.
func TestConfigStoreBar(t *testing.T) {
	t.Parallel() // waits on its own boards; runs beside the others (doc.go)
	if testing.Short() {
		t.Skip("starts three boards")
	}
	boards := accCluster(t, 3)
	b1, b2, b3 := boards[0], boards[1], boards[2]
	var text string
	testutil.EventuallyWithin(t, "the store seeded", 10*time.Second, func() bool {
		code, _, body := confDo(b1, accAdminToken, "GET", "/api/config", "", "")
		text = body
		return code == http.StatusOK
	})
	added := text + fmt.Sprintf("\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\nnode = %q\n", b3.name)
	code, h, body := confDo(b1, accAdminToken, "PUT", "/api/config", `"1"`, added)
	if code != http.StatusOK || h.Get("ETag") != `"2"` || !strings.Contains(body, `"device"`) {
		t.Fatalf("PUT adding fan: %d %s %s", code, h.Get("ETag"), body)
	}
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" holds version 2", 5*time.Second, func() bool {
			code, h, body := confDo(b, accAdminToken, "GET", "/api/config", "", "")
			return code == http.StatusOK && h.Get("ETag") == `"2"` && strings.Contains(body, `"fan"`)
		})
	}
	vw := accJSON(t, b1, accAdminToken, "POST", "/api/users", `{"name":"v1","role":"viewer"}`, http.StatusCreated)
	vTok, _ := vw["token"].(string)
	accSynced(t, boards, 1)
	for _, c := range []struct {
		who, ifMatch, text string
		want               int
		says               string
	}{
		{accAdminToken, `"2"`, strings.Replace(added, `driver = "sim-switch"`+"\nnode = \"ews3\"", `driver = "sim-swich"`+"\nnode = \"ews3\"", 1), http.StatusBadRequest, "sim-swich"},
		{accAdminToken, `"1"`, text, http.StatusPreconditionFailed, "not 1"},
		{vTok, `"2"`, text, http.StatusForbidden, "admin only"},
	} {
		if code, _, body := confDo(b2, c.who, "PUT", "/api/config", c.ifMatch, c.text); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("PUT If-Match %s: %d %s, want %d saying %q", c.ifMatch, code, body, c.want, c.says)
		}
	}

	restartAll(t, boards)
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" lists fan on "+b3.name, 5*time.Second, func() bool {
			code, _, body := confDo(b, accAdminToken, "GET", "/api/devices", "", "")
			return code == http.StatusOK && strings.Contains(body, `"name":"fan"`) && strings.Contains(body, `"node":"`+b3.name+`"`)
		})
	}
	accStatus(t, b1, accAdminToken, "POST", "/api/devices/fan/toggle", http.StatusOK)

	// the boards' logs are in memory (no state_dir): each puts its kept
	// copy back after the restart, 503 with Retry-After until one did
	testutil.EventuallyWithin(t, "a rollback not refused for an election", 10*time.Second, func() bool {
		code, h, body = confDo(b2, accAdminToken, "POST", "/api/config/rollback?to=1", "", "")
		return code != http.StatusServiceUnavailable
	})
	if code != http.StatusOK || h.Get("ETag") != `"3"` {
		t.Fatalf("rollback: %d %s %s", code, h.Get("ETag"), body)
	}
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" holds version 3", 5*time.Second, func() bool {
			code, h, _ := confDo(b, accAdminToken, "GET", "/api/config", "", "")
			return code == http.StatusOK && h.Get("ETag") == `"3"`
		})
	}
	restartAll(t, boards)
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" without fan", 5*time.Second, func() bool {
			code, _, body := confDo(b, accAdminToken, "GET", "/api/devices", "", "")
			return code == http.StatusOK && strings.Contains(body, `"relay1"`) && !strings.Contains(body, `"fan"`)
		})
	}
	if code, h, _ := confDo(b3, accAdminToken, "GET", "/api/config", "", ""); code != http.StatusOK || h.Get("ETag") != `"3"` {
		t.Errorf("after the restarts: %d ETag %s, want version 3", code, h.Get("ETag"))
	}
}

// restartAll stops every board (SIGTERM) and starts it again, and waits
// until each sees a master and every board running.
func restartAll(t *testing.T, boards []*board) {
	t.Helper()
	bin := ewsBinary(t)
	for _, b := range boards {
		b.stop(t, 10*time.Second)
	}
	for _, b := range boards {
		b.start(t, bin)
	}
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" sees a master and every board running", 30*time.Second, func() bool {
			v, err := b.view()
			if err != nil || v.Master == "" || len(v.Nodes) != len(boards) {
				return false
			}
			for _, r := range v.Nodes {
				if r.Runstate != "running" {
					return false
				}
			}
			return true
		})
	}
}

// confDo sends one request of the configuration API.
func confDo(b *board, token, method, path, ifMatch, body string) (int, http.Header, string) {
	req, err := http.NewRequest(method, "http://"+b.http+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := askClient.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}
