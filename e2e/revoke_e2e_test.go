package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestRevokeBoard is the bar of a stolen card (docs/NOTES.md "Revoking a
// board"): three `ews run` boards, each on its own board bundle minted from
// the admin's, TLS on; `ews cluster revoke ews3` with the admin bundle;
// then ews1's and ews2's /api/cluster show ews3 revoked within 5 s, and a
// toggle through ews2 of a relay on ews1 still answers 200.
func TestRevokeBoard(t *testing.T) {
	long(t, "starts real ews processes")
	bin := ewsBinary(t)
	mc := mintCluster(t, bin, 3)
	bun, boards, client, caPEM := mc.bundle, mc.boards, mc.client, mc.caPEM
	mc.configure(t, func(b *tlsBoard) string {
		return boardTOML{cluster: fmt.Sprintf("bundle_file = %q\ntmax = \"1s\"\ntthreshold = \"1s\"\nheartbeat = \"100ms\"\n", mc.own(b)), rest: fmt.Sprintf(`[http]
auth = "token"
token = %q
https = %q
%s`, bun.Token, b.https, relay1OnEws1)}.doc(b.board, mc.peers, bun.Key)
	})
	started := time.Now()
	mc.start(t, bin)
	view, runstate := mc.view, func(v clusterView, name string) string { return v.runstates()[name] }
	mc.waitFormed(t, "ews1")

	t.Logf("3 boards running %v after their start", time.Since(started).Round(time.Millisecond))
	// ews3's own certificate, as a thief holding its card presents it
	ews3, err := bundle.Read(mc.own(boards[2]))
	if err != nil {
		t.Fatal(err)
	}
	der, _ := base64.StdEncoding.DecodeString(ews3.Cert)
	keyDER, _ := base64.StdEncoding.DecodeString(ews3.CertKey)
	key, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		t.Fatalf("ews3's key: %v", err)
	}
	asEws3 := func() (int, error) { // a new connection each time: its handshake is what is judged
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Pool(t, caPEM), Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: tr}).Get("https://" + boards[0].https + "/api/cluster/raft")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := asEws3(); err != nil || code != http.StatusOK {
		t.Fatalf("ews3's certificate to ews1 before the revocation: %d %v, want 200", code, err)
	}

	// The log may still be electing its leader: a refused revoke (503)
	// is tried again until the deadline.
	var out []byte
	testutil.WaitFor(t, "ews cluster revoke ews3 through ews1", 30*time.Second, func() (bool, string) {
		out, err = exec.Command(bin, "cluster", "revoke", "ews3", "--bundle", mc.admin, "--url", "https://"+boards[0].https, "--cacert", mc.caFile).CombinedOutput()
		return err == nil, fmt.Sprintf("%v: %s", err, out)
	})
	t.Logf("ews cluster revoke (%v after the start): %s", time.Since(started).Round(time.Millisecond), strings.TrimSpace(string(out)))
	revokedAt := time.Now()

	testutil.WaitFor(t, "ews1 and ews2 show ews3 revoked", 5*time.Second, func() (bool, string) {
		seen := ""
		for _, b := range boards[:2] {
			v, err := view(b)
			rs := runstate(v, "ews3")
			seen += fmt.Sprintf("%s: ews3 %q (%v); ", b.name, rs, err)
			if err != nil || rs != "revoked" {
				return false, seen
			}
		}
		return true, seen
	})
	t.Logf("ews3 shown revoked on ews1 and ews2 %v after the command returned", time.Since(revokedAt).Round(time.Millisecond))

	testutil.WaitFor(t, "ews1 refuses ews3's certificate", 5*time.Second, func() (bool, string) {
		code, err := asEws3()
		return err != nil || code == http.StatusForbidden, fmt.Sprintf("%d %v", code, err)
	})

	toggle := func(b *tlsBoard) (int, string, error) {
		req, _ := http.NewRequest(http.MethodPost, "https://"+b.https+"/api/devices/relay1/toggle", nil)
		req.Header.Set("Authorization", "Bearer "+bun.Token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	for _, b := range boards[:2] {
		if code, body, err := toggle(b); err != nil || code != http.StatusOK {
			t.Fatalf("toggle of relay1 (on ews1) through %s after ews3's revocation: %d %s %v", b.name, code, body, err)
		}
	}
	// ews3 stays revoked: its gossip goes on being refused.
	testutil.WaitFor(t, "the list on ews2", 5*time.Second, func() (bool, string) {
		resp, err := client.Get("https://" + boards[1].https + "/api/cluster/revoke")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"board":"ews3"`), string(body)
	})
}
