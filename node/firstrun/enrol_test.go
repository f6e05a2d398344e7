package firstrun_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/enrolment"
	"github.com/ews-firmware/ews/node/firstrun"
)

// runningBoard is a hand-written Fetcher: the sealed enrolments a running
// board keeps, each given out once.
type runningBoard struct {
	base    string
	pending map[string]string // id -> sealed
	peers   []string
	asked   []string // the ids asked for
}

func (r *runningBoard) fetch(_ context.Context, base, id string) (enrolment.Answer, error) {
	r.asked = append(r.asked, id)
	if base != r.base {
		return enrolment.Answer{}, errors.New("connection refused")
	}
	sealed, ok := r.pending[id]
	if !ok {
		return enrolment.Answer{}, fmt.Errorf("404: %w", firstrun.ErrNoEnrolment)
	}
	delete(r.pending, id)
	return enrolment.Answer{ID: id, Sealed: sealed, Peers: r.peers}, nil
}

// A board joins with the code `ews cluster enrol` printed and the running
// board's URL: its bundle and peers come sealed from there, once; a wrong
// code, a bad URL, a board that does not answer, or an admin bundle sealed
// by mistake write nothing.
func TestJoinWithAnEnrolmentCode(t *testing.T) {
	admin := bundletest.Admin(t, "ews1", "ews2")
	seal := func(b *bundle.Bundle) (string, string) {
		text, err := b.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		code, _ := enrol.NewCode()
		_, sealed, err := enrol.Seal(code, text)
		if err != nil {
			t.Fatal(err)
		}
		return code, sealed
	}
	board, _ := admin.Board("ews2", nil, time.Now())
	code, sealed := seal(board)
	adminCode, adminSealed := seal(admin)
	rb := &runningBoard{base: "https://ews1.local:8443", peers: []string{"ews1=127.0.0.1:7946", "ews2=127.0.0.1:7947"},
		pending: map[string]string{enrol.ID(code): sealed, enrol.ID(adminCode): adminSealed}}
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir, Fetch: rb.fetch})
	other, _ := enrol.NewCode()
	for _, c := range []struct {
		name, code, url string
		want            int
		says            string
	}{
		{"not a code", "1234", rb.base, http.StatusBadRequest, "16 symbols"},
		{"not a URL", code, "ews1.local", http.StatusBadRequest, "http(s)://HOST:PORT"},
		{"a URL with a user", code, "https://me@ews1.local:8443", http.StatusBadRequest, "http(s)://HOST:PORT"},
		{"a board that does not answer", code, "https://ews9.local:8443", http.StatusBadGateway, "connection refused"},
		{"a code nobody enrolled", other, rb.base, http.StatusNotFound, "used already"},
		{"the admin bundle sealed by mistake", adminCode, rb.base, http.StatusBadRequest, "never goes on a board"},
	} {
		if code, body := post(t, srv, "/firstrun/join", url.Values{"claim": {s.Claim()}, "enrol_code": {c.code}, "enrol_url": {c.url}}); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d, want %d saying %q:\n%.400s", c.name, code, c.want, c.says, body)
		}
		noConfig(t, dir, c.name)
	}
	typed := strings.ToLower(enrol.Show(code)) // as a person types it
	if code, body := post(t, srv, "/firstrun/join", url.Values{"claim": {s.Claim()}, "enrol_code": {typed}, "enrol_url": {rb.base + "/"}, "gossip": {"127.0.0.1:7947"}}); code != http.StatusOK || !strings.Contains(body, "Start the board") {
		t.Fatalf("the right code: %d\n%.400s", code, body)
	}
	cfg, err := config.Load(filepath.Join(dir, "ews.toml"), bootconf.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	if cfg.Node.Name != "ews2" || len(cfg.Cluster.Peers) != 2 {
		t.Errorf("config: %q %v", cfg.Node.Name, cfg.Cluster.Peers)
	}
	if _, ok := rb.pending[enrol.ID(code)]; ok {
		t.Error("the enrolment is still pending after it was fetched")
	}
}

// The link `ews cluster enrol` prints opens the page with the enrolment
// form filled; a link whose code or URL the form would not take fills
// nothing of it, and what it carries is escaped.
func TestEnrolLinkFillsTheForm(t *testing.T) {
	_, srv := newPage(t, firstrun.Options{})
	code, _ := enrol.NewCode()
	link := firstrun.EnrolLink("ews3.local", strings.ToLower(code), "https://ews1.local:8443")
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "https" || u.Host != "ews3.local:8443" || u.Query().Get("code") != enrol.Show(code) {
		t.Fatalf("the link %q", link)
	}
	for _, c := range []struct {
		name, query, wantCode, wantURL string
	}{
		{"the link", u.RawQuery, enrol.Show(code), "https://ews1.local:8443"},
		{"not a code", url.Values{"code": {"1234"}, "from": {"https://ews1.local:8443/x"}}.Encode(), "", "https://ews1.local:8443"},
		{"not a URL", url.Values{"code": {code}, "from": {"javascript:alert(1)"}}.Encode(), enrol.Show(code), ""},
		{"markup", url.Values{"code": {`"><script>`}, "from": {`https://a"b:1`}}.Encode(), "", ""},
	} {
		status, body := get(t, srv, "/?"+c.query)
		if status != http.StatusOK || !strings.Contains(body, `name="enrol_code" value="`+c.wantCode+`"`) || !strings.Contains(body, `name="enrol_url" value="`+c.wantURL+`"`) || strings.Contains(body, "<script>") {
			i := strings.Index(body, `name="enrol_code"`)
			t.Errorf("%s: %d, want the form filled with %q and %q: %.300s", c.name, status, c.wantCode, c.wantURL, body[max(i, 0):])
		}
	}
}
