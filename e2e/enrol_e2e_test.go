package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/node/enrolment"
)

// `ews cluster enrol NAME` against a running TLS cluster: the board at
// --url keeps NAME's bundle sealed under the printed code, gives it out
// once to whoever names its id, and it opens with the code into a board
// bundle of this cluster; the code itself never reaches the board.
func TestClusterEnrol(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	c := newRotateCluster(t, bin, true)
	url := c.url(c.boards[0])
	out, err := exec.Command(bin, "cluster", "enrol", "ews3", "--bundle", c.admin, "--url", url, "--cacert", c.caFile).CombinedOutput()
	if err != nil {
		t.Fatalf("ews cluster enrol: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`enrolment code for ews3: ([0-9A-Z-]{19})`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no code printed:\n%s", out)
	}
	code := enrol.Normalise(m[1])
	if !strings.Contains(string(out), "https://ews3.local:8443/?code="+m[1]+"&from=") {
		t.Errorf("no link to ews3's first-run page with the code:\n%s", out)
	}
	fetch := func() (int, enrolment.Answer) {
		resp, err := c.client.Get(url + enrolment.Path + "/" + enrol.ID(code))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a enrolment.Answer
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &a)
		return resp.StatusCode, a
	}
	status, a := fetch()
	if status != http.StatusOK || len(a.Peers) != 3 {
		t.Fatalf("fetch: %d %+v", status, a)
	}
	text, err := enrol.Open(code, a.Sealed)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	b, err := bundle.Parse("the enrolment", text)
	if err != nil || b.NeedBoard("the enrolment") != nil || b.Name != "ews3" || b.Key != c.bundle.Key {
		t.Fatalf("the enrolment's bundle: %v, name %q", err, b.Name)
	}
	if strings.Contains(string(out), a.Sealed) {
		t.Fatal("the sealed text was printed")
	}
	if status, _ := fetch(); status != http.StatusNotFound {
		t.Fatalf("a second fetch: %d, want 404", status)
	}
	// a board's card (its certificate, no person's token) leaves none, and
	// fetching needs nothing it holds
	_, thief := c.thief(t, c.boards[2])
	resp, err := thief.Post(url+enrolment.Path, "application/json", strings.NewReader(`{"id":"`+strings.Repeat("f", enrol.IDLen)+`","sealed":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an enrolment left with a board's card: %s, want 401", resp.Status)
	}
	// nor lists the enrolments waiting (their names and expiry are the admin's)
	resp, err = thief.Get(url + enrolment.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the enrolments listed with a board's card: %s, want 401", resp.Status)
	}
	// only an admin leaves one
	if code, body := c.do(c.boards[0], "POST", enrolment.Path, c.userToken(t), `{"id":"`+strings.Repeat("a", enrol.IDLen)+`","sealed":"x"}`); code != http.StatusForbidden {
		t.Fatalf("an operator's enrolment: %d %s, want 403", code, body)
	}
}
