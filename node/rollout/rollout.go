// Package rollout upgrades a cluster's boards one at a time over HTTP(S), followers first and the master last.
package rollout

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"sort"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/node/firmware"
)

// HeaderSHA256 carries the binary's SHA-256 to POST /api/board/firmware.
const HeaderSHA256 = firmware.HeaderSHA256

// Board is one row of GET /api/cluster, as far as a rollout needs it.
type Board struct {
	Name     string `json:"name"`
	Rank     int    `json:"rank"`
	HTTP     string `json:"http"`
	Runstate string `json:"runstate"`
}

// View is GET /api/cluster, as far as a rollout needs it.
type View struct {
	Master string  `json:"master"`
	Self   string  `json:"self"`
	Nodes  []Board `json:"nodes"`
}

type info struct {
	Version  string `json:"version"`
	SHA256   string `json:"sha256"`
	Runstate string `json:"runstate"`
	Last     *struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
		At      string `json:"at"`
	} `json:"last_upgrade"`
}

// Rollout upgrades boards to one binary.
type Rollout struct {
	Body   func() (io.ReadCloser, error) // the binary, opened once per board
	SHA256 string                        // its hex SHA-256
	Token  string                        // bearer token; "" with auth = "none"
	// Auth, when set, is sent instead of Token: the credentials of whoever
	// started a rollout on a board (Authorization, Cookie), since a board
	// has no admin credential of its own (docs/NOTES.md "Security").
	Auth     http.Header
	PerBoard time.Duration           // how long one board may take to come back
	Client   *http.Client            // short requests; default 5 s timeout
	Upload   *http.Client            // uploads; default 5 min timeout
	Progress func(board, msg string) // called after each board (and on failure)
	// Scheme of the boards' URLs: "https" when the cluster has TLS on
	// (their http addresses are then HTTPS listeners); "": the scheme
	// GetView ended up on, else "http".
	Scheme string
	// TLS is the default clients' TLS config for https: the cluster CA
	// (and a board's own certificate); nil: the system's roots.
	TLS *tls.Config
}

// Order is the upgrade order: followers from the last rank up, the master
// last; last (a board's own name, "" for none) goes after even the master
// (a board coordinating a rollout restarts itself at the end).
func Order(v View, last string) []Board {
	var out []Board
	var master, self *Board
	for i := range v.Nodes {
		switch b := &v.Nodes[i]; b.Name {
		case last:
			self = b
		case v.Master:
			master = b
		default:
			out = append(out, *b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank > out[j].Rank })
	for _, b := range []*Board{master, self} {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out
}

// Check refuses a rollout that would take a second board out.
func Check(v View) error {
	if v.Master == "" {
		return errors.New("rollout: the cluster has no master now; upgrade when it has one")
	}
	for _, b := range v.Nodes {
		if b.Runstate != "running" {
			return fmt.Errorf("rollout: board %s is %s, not running: bring it back first (an upgrade takes one board out at a time)", b.Name, b.Runstate)
		}
	}
	return nil
}

func (r *Rollout) defaults() {
	if r.Client == nil {
		r.Client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: r.TLS, Proxy: nil}}
	}
	if r.Upload == nil {
		r.Upload = &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{TLSClientConfig: r.TLS, Proxy: nil}}
	}
	if r.PerBoard <= 0 {
		r.PerBoard = 2 * time.Minute
	}
	if r.Progress == nil {
		r.Progress = func(string, string) {}
	}
}

// GetView reads GET base/api/cluster.
func (r *Rollout) GetView(ctx context.Context, base string) (View, error) {
	r.defaults()
	var v View
	// First without the token: base may be a plain listener that
	// redirects to HTTPS, and the token must not cross it in clear.
	final, err := r.getJSONAt(ctx, strings.TrimSuffix(base, "/")+"/api/cluster", &v, false)
	var unauth *statusError
	if errors.As(err, &unauth) && unauth.code == http.StatusUnauthorized {
		final, err = r.getJSONAt(ctx, unauth.url.String(), &v, true) // read_auth
	}
	if err == nil && r.Scheme == "" {
		r.Scheme = final.Scheme // a plain listener of a TLS board redirects to HTTPS
	}
	return v, err
}

// base is board b's URL; never plain HTTP when the cluster has TLS on
// (the token would cross the network in clear, and the board would not
// answer).
func (r *Rollout) base(b Board) string {
	scheme := r.Scheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + b.HTTP
}

// Boards upgrades each board in turn; it stops at the first failure.
func (r *Rollout) Boards(ctx context.Context, boards []Board) error {
	r.defaults()
	for _, b := range boards {
		t0 := time.Now()
		msg, err := r.One(ctx, b)
		if err != nil {
			r.Progress(b.Name, "failed: "+err.Error())
			return fmt.Errorf("%s: %v (boards after it were not touched)", b.Name, err)
		}
		r.Progress(b.Name, fmt.Sprintf("%s (%.1f s)", msg, time.Since(t0).Seconds()))
	}
	return nil
}

// One uploads to board b and waits until it is back, running the new binary.
func (r *Rollout) One(ctx context.Context, b Board) (string, error) {
	r.defaults()
	url := r.base(b)
	var before info
	if err := r.getJSON(ctx, url+"/api/board", &before); err != nil {
		return "", err
	}
	if before.SHA256 == r.SHA256 {
		return "already runs it, version " + before.Version, nil
	}
	if err := r.post(ctx, url); err != nil {
		return "", err
	}
	deadline := time.Now().Add(r.PerBoard)
	for time.Now().Before(deadline) {
		if err := clock.Sleep(ctx, 250*time.Millisecond); err != nil {
			return "", err
		}
		var in info
		if r.getJSON(ctx, url+"/api/board", &in) != nil {
			continue // restarting
		}
		if in.Last != nil && (before.Last == nil || in.Last.At != before.Last.At) && in.Last.Outcome == "rolled back" {
			return "", fmt.Errorf("rolled back to version %s: %s", in.Version, in.Last.Reason)
		}
		if in.SHA256 != r.SHA256 || in.Runstate != "running" {
			continue
		}
		var v View
		if r.getJSON(ctx, url+"/api/cluster", &v) != nil || v.Master == "" {
			continue
		}
		for _, n := range v.Nodes {
			if n.Name == b.Name && n.Runstate == "running" {
				return fmt.Sprintf("version %s -> %s, back in the table (master %s)", before.Version, in.Version, v.Master), nil
			}
		}
	}
	return "", fmt.Errorf("not back running the new binary within %v", r.PerBoard)
}

func (r *Rollout) post(ctx context.Context, url string) error {
	body, err := r.Body()
	if err != nil {
		return fmt.Errorf("open the binary: %v", err)
	}
	defer body.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/board/firmware", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(HeaderSHA256, r.SHA256)
	r.credentials(req)
	resp, err := r.Upload.Do(req)
	if err != nil {
		return fmt.Errorf("upload: %v", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("upload refused: %s %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// getJSON GETs a board's url with the token (read_auth may cover it).
func (r *Rollout) getJSON(ctx context.Context, url string, v any) error {
	_, err := r.getJSONAt(ctx, url, v, true)
	return err
}

// statusError is a GET answered with another status than 200.
type statusError struct {
	code int
	url  *neturl.URL // where, after redirects
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// getJSONAt GETs url into v and returns the URL it ended at after
// redirects.
func (r *Rollout) getJSONAt(ctx context.Context, url string, v any, token bool) (*neturl.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// with the token unless the caller must not send it yet (a plain
	// listener may be in the way); /api/board shows the version and
	// SHA-256 only with credentials (docs/NOTES.md, Security: read_auth
	// means read)
	if token {
		r.credentials(req)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{resp.StatusCode, resp.Request.URL, fmt.Sprintf("GET %s: %s", url, resp.Status)}
	}
	return resp.Request.URL, json.NewDecoder(resp.Body).Decode(v)
}

// credentials puts the rollout's credentials on req: Auth, else Token.
func (r *Rollout) credentials(req *http.Request) {
	if r.Auth != nil {
		for _, k := range []string{"Authorization", "Cookie"} {
			if v := r.Auth.Get(k); v != "" {
				req.Header.Set(k, v)
			}
		}
		return
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
}
