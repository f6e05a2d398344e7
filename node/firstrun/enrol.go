package firstrun

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/node/enrolment"
)

// Joining with an enrolment code (docs/DESIGN.md, First run): the code and
// a running board's URL, typed on this page, fetch the board bundle `ews
// cluster enrol` sealed under the code and left there, once. The fetch
// trusts no certificate (this board has no CA yet): the code decides, as
// the sealed bundle opens only with it and any change to it fails; a
// board in the middle can withhold it, never read or alter it.

// Fetcher fetches the enrolment of id from the running board at base
// (Options.Fetch; a GET of enrolment.Path/{id} by default). It answers
// ErrNoEnrolment (wrapped) when the board has none of that id.
type Fetcher func(ctx context.Context, base, id string) (enrolment.Answer, error)

// ErrNoEnrolment: the running board keeps no enrolment of the code's id:
// used already, expired, or left with another board (another cluster's).
var ErrNoEnrolment = errors.New("no enrolment of this code there")

// fetchEnrolment is the default Fetcher.
func fetchEnrolment(ctx context.Context, base, id string) (enrolment.Answer, error) {
	var a enrolment.Answer
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+enrolment.Path+"/"+id, nil)
	if err != nil {
		return a, err
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the code authenticates (above)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, enrol.MaxSealed+64<<10))
	if resp.StatusCode == http.StatusNotFound {
		return a, ErrNoEnrolment
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return a, fmt.Errorf("%s: %s", resp.Status, e.Error)
		}
		return a, fmt.Errorf("%s: %.200s", resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return a, err
	}
	return a, nil
}

// enrolled opens the enrolment of the typed code at the typed URL: this
// board's bundle and the cluster's peers. The error is said to the person
// as it is, with its status.
func (s *Server) enrolled(ctx context.Context, typedCode, typedURL string) (*bundle.Bundle, []string, int, error) {
	code := enrol.Normalise(typedCode)
	if !enrol.Valid(code) {
		return nil, nil, http.StatusBadRequest, fmt.Errorf("firstrun: the enrolment code: 16 symbols (0-9, A-Z without I, L, O, U), as `ews cluster enrol` printed it")
	}
	u, err := url.Parse(strings.TrimSpace(typedURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, nil, http.StatusBadRequest, fmt.Errorf("firstrun: the running board's URL: want http(s)://HOST:PORT, as `ews cluster enrol` printed it")
	}
	base := u.Scheme + "://" + u.Host
	ans, err := s.opts.Fetch(ctx, base, enrol.ID(code))
	if errors.Is(err, ErrNoEnrolment) {
		return nil, nil, http.StatusNotFound, fmt.Errorf("firstrun: %s has no enrolment for this code: it was used already (a code works once), it expired, or it was left with another board or cluster (type the URL `ews cluster enrol` printed with it); nothing was changed here: run `ews cluster enrol` again for a new code", base)
	}
	if err != nil {
		return nil, nil, http.StatusBadGateway, fmt.Errorf("firstrun: fetching the enrolment from %s: %v", base, err)
	}
	text, err := enrol.Open(code, ans.Sealed)
	if err != nil {
		return nil, nil, http.StatusBadRequest, fmt.Errorf("firstrun: %v (the enrolment is fetched once: run `ews cluster enrol` again)", err)
	}
	b, err := bundle.Parse("the enrolment's bundle", text)
	if err == nil {
		err = b.NeedBoard("the enrolment's bundle")
	}
	if err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	return b, ans.Peers, 0, nil
}

// linkHost is a URL's host the link may carry: a name or an address, a port.
var linkHost = regexp.MustCompile(`^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// enrolLink reads the link `ews cluster enrol` prints for a phone
// (?code=CODE&from=URL): the code as printed and the running board's URL,
// each "" unless it is one the form would take.
func enrolLink(q url.Values) (code, from string) {
	if c := enrol.Normalise(q.Get("code")); enrol.Valid(c) {
		code = enrol.Show(c)
	}
	if u, err := url.Parse(q.Get("from")); err == nil && (u.Scheme == "http" || u.Scheme == "https") && linkHost.MatchString(u.Host) && u.User == nil {
		from = u.Scheme + "://" + u.Host
	}
	return code, from
}

// EnrolLink is the link to board host's first-run page (its HTTPS port)
// with the enrolment form filled: code, and from, the running board's URL.
func EnrolLink(host, code, from string) string {
	return (&url.URL{Scheme: "https", Host: net.JoinHostPort(host, "8443"), Path: "/",
		RawQuery: url.Values{"code": {enrol.Show(enrol.Normalise(code))}, "from": {from}}.Encode()}).String()
}
