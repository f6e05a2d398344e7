package e2e

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// tlsBoard is a board of a TLS cluster: http is its redirect-only plain
// listener, https the one clients and boards use.
type tlsBoard struct {
	*board
	https string
}

// TestTLSClusterCapture runs three `ews run` boards with the bundle's CA
// on loopback and captures every packet of their ports with tcpdump while
// a client logs in through a follower and switches a relay wired to the
// third board (client -> ews2 -> master ews1 -> ews3), with the token and
// with the session cookie, then logs out on another board. Done when the
// capture holds neither the token, nor the cookie, nor a dispatch or via
// mark, nor any Authorization header in clear, while a canary sent on
// purpose in plain HTTP is in it (the capture sees clear text).
func TestTLSClusterCapture(t *testing.T) {
	long(t, "starts real ews processes")
	if os.Geteuid() != 0 {
		t.Skip("tcpdump needs root to capture on lo; run as root (scripts/test.sh does)")
	}
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("no tcpdump: apt-get install -y tcpdump (scripts/test.sh installs it)")
	}
	bin := ewsBinary(t)
	mc := mintCluster(t, bin, 3) // each board gets its own bundle minted from the admin's
	dir, bun, boards, client := mc.dir, mc.bundle, mc.boards, mc.client
	low, high := 65535, 0
	for _, b := range boards {
		var port int
		fmt.Sscanf(b.http[strings.LastIndex(b.http, ":")+1:], "%d", &port)
		low, high = min(low, port), max(high, port+200)
	}
	mc.configure(t, func(b *tlsBoard) string {
		return boardTOML{cluster: fmt.Sprintf("bundle_file = %q\ntmax = \"1s\"\ntthreshold = \"1s\"\nheartbeat = \"100ms\"\n", mc.own(b)), rest: fmt.Sprintf(`[http]
auth = "token"
token = %q
https = %q
[sim]
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews3"
`, bun.Token, b.https)}.doc(b.board, mc.peers, bun.Key)
	})

	pcap := filepath.Join(dir, "lo.pcap")
	var dumpErr testutil.Buffer
	dump := exec.Command(tcpdump, "-i", "lo", "--immediate-mode", "-U", "-s", "0", "-w", pcap, "tcp", "portrange", fmt.Sprintf("%d-%d", low, high+100))
	dump.Stderr = &dumpErr
	if err := dump.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = dump.Process.Signal(syscall.SIGINT)
			_ = dump.Wait()
		}
	}
	t.Cleanup(stop)
	testutil.EventuallyWithin(t, "tcpdump listening on lo", 10*time.Second, func() bool {
		return strings.Contains(dumpErr.String(), "listening on")
	})

	mc.start(t, bin)
	mc.waitFormed(t, "ews1")

	follower := "https://" + boards[1].https
	do := func(method, url string, hdr map[string]string, body string) (int, string, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp
	}
	// The durable log rides the same HTTPS listener on the boards'
	// certificates: one leader, three voters, and a user made through the
	// follower is committed (node/durablestate.go).
	testutil.WaitFor(t, "the durable log: one leader and three voters on every board", 20*time.Second, func() (bool, string) {
		seen := ""
		for _, b := range boards {
			var st struct {
				Leader string   `json:"leader"`
				Voters []string `json:"voters"`
			}
			resp, err := client.Get("https://" + b.https + "/api/cluster/raft")
			if err != nil {
				return false, err.Error()
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			seen += fmt.Sprintf("%s: leader %q voters %v; ", b.name, st.Leader, st.Voters)
			if err != nil || st.Leader == "" || len(st.Voters) != 3 {
				return false, seen
			}
		}
		return true, seen
	})
	if code, body, _ := do("POST", follower+"/api/users", map[string]string{"Authorization": "Bearer " + bun.Token, "Content-Type": "application/json"}, `{"name":"v1","role":"viewer"}`); code != http.StatusCreated {
		t.Fatalf("POST /api/users through ews2 over HTTPS: %d %s", code, body)
	}
	// Log in through the follower: a Secure cookie.
	code, body, resp := do("POST", follower+"/api/login", map[string]string{"Content-Type": "application/json"}, `{"token":"`+bun.Token+`"}`)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "ews_session" {
			cookie = c
		}
	}
	if code != 200 || cookie == nil || !cookie.Secure {
		t.Fatalf("login through ews2: %d %s, cookie %+v (want a Secure one)", code, body, cookie)
	}
	withCookie := map[string]string{"Cookie": "ews_session=" + cookie.Value}
	// The session is user admin's (the admin bundle's token: NOTES
	// "Security"), whom each board's users store learns from the durable
	// log, seeded at start: a board is a few milliseconds behind the one
	// that made the cookie, as for any user made a moment ago.
	testutil.WaitFor(t, "every board knows the session's user", 10*time.Second, func() (bool, string) {
		for _, b := range boards {
			if code, body, _ := do("GET", "https://"+b.https+"/api/users", withCookie, ""); code != 200 {
				return false, fmt.Sprintf("%s: %d %s", b.name, code, body)
			}
		}
		return true, ""
	})
	if code, body, _ := do("POST", follower+"/api/devices/relay1/turn_on", withCookie, ""); code != 200 || !strings.Contains(body, `"state":"on"`) {
		t.Fatalf("turn_on relay1 (on ews3) through ews2 with the cookie: %d %s", code, body)
	}
	if code, body, _ := do("POST", follower+"/api/devices/relay1/toggle", map[string]string{"Authorization": "Bearer " + bun.Token}, ""); code != 200 || !strings.Contains(body, `"state":"off"`) {
		t.Fatalf("toggle relay1 through ews2 with the token: %d %s", code, body)
	}
	// Logout on ews1; the follower refuses the cookie soon after.
	if code, body, _ := do("POST", "https://"+boards[0].https+"/api/logout", withCookie, ""); code != 200 {
		t.Fatalf("logout on ews1: %d %s", code, body)
	}
	testutil.EventuallyWithin(t, "ews2 refuses the cookie logged out on ews1", 10*time.Second, func() bool {
		code, _, _ := do("POST", follower+"/api/devices/relay1/turn_on", withCookie, "")
		return code == http.StatusUnauthorized
	})
	for _, b := range boards { // every board, asked directly, refuses it too
		testutil.EventuallyWithin(t, b.name+" says the cookie is logged out", 10*time.Second, func() bool {
			code, body, _ := do("GET", "https://"+b.https+"/api/session", withCookie, "")
			return code == 200 && strings.Contains(body, `"authenticated":false`)
		})
	}
	// The plain listener only redirects (and answers probes); the canary
	// goes in clear on purpose.
	canary := "ews-canary-" + fmt.Sprint(time.Now().UnixNano())
	code, _, resp = do("GET", "http://"+boards[1].http+"/api/cluster?"+canary, nil, "")
	if loc := resp.Header.Get("Location"); code != http.StatusPermanentRedirect || loc != "https://"+boards[1].https+"/api/cluster?"+canary {
		t.Fatalf("plain GET /api/cluster: %d Location %q, want 308 to https", code, loc)
	}
	if code, _, _ := do("GET", "http://"+boards[1].http+"/healthz", nil, ""); code != 200 {
		t.Fatalf("plain /healthz: %d", code)
	}
	// ews status follows the redirect and trusts the CA it is given.
	caFile := mc.caFile
	if out, err := exec.Command(bin, "status", "--url", "http://"+boards[2].http, "--cacert", caFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "ews1") {
		t.Fatalf("ews status --cacert: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "status", "--url", "https://"+boards[2].https).CombinedOutput(); err == nil || !strings.Contains(string(out), "--cacert") {
		t.Fatalf("ews status without the CA: %v, want a hint at --cacert\n%s", err, out)
	}
	// ews bench loads a TLS board with the CA (and its token, in TLS too).
	if out, err := exec.Command(bin, "bench", "--url", "https://"+boards[1].https, "--cacert", caFile, "--rate", "40", "--duration", "500ms",
		"--header", "Authorization: Bearer "+bun.Token, "--mix", "browse=1:GET /api/devices").CombinedOutput(); err != nil || !strings.Contains(string(out), "browse") {
		t.Fatalf("ews bench --cacert: %v\n%s", err, out)
	}
	client.CloseIdleConnections()
	var capture []byte
	testutil.EventuallyWithin(t, "the plain-HTTP canary in the capture (it sees the boards' traffic)", 10*time.Second, func() bool {
		capture, _ = os.ReadFile(pcap)
		if bytes.Contains(capture, []byte(canary)) {
			return true
		}
		// a tcpdump the loaded machine starves drops packets (it says so
		// when it stops): send the canary again, so that any copy shows it
		_, _, _ = do("GET", "http://"+boards[1].http+"/api/cluster?"+canary, nil, "")
		return false
	})
	stop()
	if capture, err = os.ReadFile(pcap); err != nil {
		t.Fatal(err)
	}
	for what, secret := range map[string]string{
		"the token": bun.Token, "the session cookie": cookie.Value, "a dispatch mark": "X-Ews-Dispatch",
		"a via mark": "X-Ews-Via", "an Authorization header": "Authorization:", "the login body": `"token":`,
	} {
		if bytes.Contains(capture, []byte(secret)) {
			t.Errorf("%s is in clear in the loopback capture", what)
		}
	}
	t.Logf("capture: %d bytes on ports %d-%d, no secret in clear", len(capture), low, high+100)
}

func x509Pool(t *testing.T, pemData []byte) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pemData) {
		t.Fatalf("ews cluster ca printed no certificate:\n%s", pemData)
	}
	return p
}
