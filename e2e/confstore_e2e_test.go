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
// (docs/NOTES.md "Configuration store"), applied live: a PUT through ews1
// adding a sim-switch on ews3 makes it appear in GET /api/devices of every
// board within 3 s, without a restart, and it toggles through the master;
// an unknown driver gets 400 naming it, a stale If-Match 412, a viewer
// 403, and none changes anything; a rollback to version 1 removes the
// device from every board. A device whose driver cannot open on its board
// is reported for that board (GET /api/config/status) and shown in error
// everywhere, and does not keep the board from starting again. The store
// survives a restart of every board.
func TestConfigStoreBar(t *testing.T) {
	beside(t, "starts three boards")
	boards := accCluster(t, 3)
	b1, b2, b3 := boards[0], boards[1], boards[2]
	var text string
	testutil.EventuallyWithin(t, "the store seeded", 10*time.Second, func() bool {
		code, _, body := confDo(b1, accAdminToken, "GET", "/api/config", "", "")
		text = body
		return code == http.StatusOK
	})
	added := text + fmt.Sprintf("\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\nnode = %q\nmax_age = \"0s\"\n", b3.name)
	code, h, body := confDo(b1, accAdminToken, "PUT", "/api/config", `"1"`, added)
	put := time.Now()
	if code != http.StatusOK || h.Get("ETag") != `"2"` || !strings.Contains(body, `"restart_needed":[]`) {
		t.Fatalf("PUT adding fan: %d %s %s", code, h.Get("ETag"), body)
	}
	for _, b := range boards { // the bar: every board's list within 3 s of the answer
		testutil.EventuallyWithin(t, b.name+" lists fan on "+b3.name, 3*time.Second-time.Since(put), func() bool {
			code, _, body := confDo(b, accAdminToken, "GET", "/api/devices", "", "")
			return code == http.StatusOK && strings.Contains(body, `"name":"fan"`) && strings.Contains(body, `"node":"`+b3.name+`"`)
		})
	}
	t.Logf("fan listed on every board %v after the PUT's answer", time.Since(put).Round(time.Millisecond))
	testutil.EventuallyWithin(t, "fan toggles through the master", 5*time.Second, func() bool {
		code, _, body := confDo(b1, accAdminToken, "POST", "/api/devices/fan/toggle", "", "")
		return code == http.StatusOK && strings.Contains(body, `"state":"on"`)
	})

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
	for _, b := range boards {
		if code, h, body := confDo(b, accAdminToken, "GET", "/api/config", "", ""); code != http.StatusOK || h.Get("ETag") != `"2"` || strings.Contains(body, "sim-swich") {
			t.Errorf("%s after the refused PUTs: %d ETag %s", b.name, code, h.Get("ETag"))
		}
	}

	code, h, body = confDo(b2, accAdminToken, "POST", "/api/config/rollback?to=1", "", "")
	if code != http.StatusOK || h.Get("ETag") != `"3"` {
		t.Fatalf("rollback: %d %s %s", code, h.Get("ETag"), body)
	}
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" without fan", 5*time.Second, func() bool {
			code, _, body := confDo(b, accAdminToken, "GET", "/api/devices", "", "")
			return code == http.StatusOK && strings.Contains(body, `"relay1"`) && !strings.Contains(body, `"fan"`)
		})
	}
	if code, _, _ := confDo(b1, accAdminToken, "POST", "/api/devices/fan/toggle", "", ""); code != http.StatusNotFound {
		t.Errorf("fan after the rollback: %d, want 404", code)
	}

	// a pin the simulated board lacks: ews1 takes the document (it checks
	// another board's device without its pins), ews3 cannot open it
	bad := text + fmt.Sprintf("\n[[device]]\nname = \"valve\"\ndriver = \"gpio-out\"\npin = \"GPIO999\"\nnode = %q\n", b3.name)
	if code, _, body := confDo(b1, accAdminToken, "PUT", "/api/config", `"3"`, bad); code != http.StatusOK {
		t.Fatalf("PUT adding valve: %d %s", code, body)
	}
	testutil.EventuallyWithin(t, b3.name+" reported failing valve", 5*time.Second, func() bool {
		code, _, body := confDo(b1, accAdminToken, "GET", "/api/config/status", "", "")
		return code == http.StatusOK && strings.Contains(body, `"board":"`+b3.name+`","version":4`) && strings.Contains(body, `"failed":{"valve":`)
	})
	testutil.EventuallyWithin(t, b2.name+" shows valve in error", 5*time.Second, func() bool {
		code, _, body := confDo(b2, accAdminToken, "GET", "/api/devices/valve", "", "")
		return code == http.StatusOK && strings.Contains(body, `"state":"error"`) && strings.Contains(body, "not open on "+b3.name)
	})

	restartAll(t, boards)
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" holds version 4 after the restart", 10*time.Second, func() bool {
			code, h, body := confDo(b, accAdminToken, "GET", "/api/config", "", "")
			return code == http.StatusOK && h.Get("ETag") == `"4"` && strings.Contains(body, "valve") && !strings.Contains(body, "fan")
		})
	}
	// ews3 started with the store's version although valve cannot open there
	testutil.EventuallyWithin(t, b3.name+" reports valve again after its restart", 10*time.Second, func() bool {
		code, _, body := confDo(b1, accAdminToken, "GET", "/api/config/status", "", "")
		return code == http.StatusOK && strings.Contains(body, `"board":"`+b3.name+`","version":4`) && strings.Contains(body, `"failed":{"valve":`)
	})
}

// restartAll stops every board (SIGTERM) and starts it again, and waits
// until each sees a master and every board running.
func restartAll(t *testing.T, boards []*board) {
	t.Helper()
	bin := ewsBinary(t)
	for _, b := range boards {
		b.stop(t, 10*time.Second)
	}
	startAll(t, bin, boards)
	waitRunning(t, boards, "", nil)
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
