package dispatch

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A request whose body crawls in holds its own connection, never a
// board's slot (docs/DESIGN.md, The front door). With capacity 1, a
// credentialed POST that has sent its header and one byte of a 1,000-byte
// body does not keep the next request from being dispatched and answered;
// on the code before, the master acquired the slot first and then read the
// body under it.
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1, auth: true})
	master := tc.boards[0]
	conn, err := net.Dial("tcp", master.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/devices/relay1/toggle HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Length: 1000\r\n\r\nx")
	testutil.Eventually(t, "the slow request authenticated", func() bool { return master.auth.checks.Load() >= 1 })

	client := &http.Client{Timeout: 5 * time.Second}
	resp, body := do(t, client, http.MethodPost, "http://"+master.addr+"/api/devices/relay1/toggle", map[string]string{"Authorization": "Bearer good"}, "{}")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a toggle behind a slow body: %d %s, want 200", resp.StatusCode, body)
	}
	if got := decode[echo](t, body); got.Board != "ews2" || got.Body != "{}" {
		t.Fatalf("answer %+v, want ews2 echoing the body", got)
	}
	if n := tc.linknum("ews2"); n != 0 {
		t.Fatalf("ews2 linknum %d while the slow body is still arriving, want 0 (no slot held)", n)
	}
}

// A body that does not arrive within BodyTimeout gets 408 with
// Connection: close, and nothing ran or took a slot.
func TestSlowBodyTimesOut(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1, auth: true})
	master := tc.boards[0]
	master.front.cfg.bodyTimeout = 300 * time.Millisecond
	conn, err := net.Dial("tcp", master.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/devices/relay1/toggle HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Length: 1000\r\n\r\nx")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Fatalf("%d close=%v, want 408 closing the connection", resp.StatusCode, resp.Close)
	}
	if n := tc.boards[1].started.Load(); n != 0 {
		t.Fatalf("the board ran %d requests, want none", n)
	}
}
