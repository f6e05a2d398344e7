package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// api is a client of the boards as a user's would be: HTTPS with the
// cluster's CA, the API token.
type api struct {
	hc    *http.Client
	token string
}

func newAPI(caFile, tokenFile string) (*api, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("field: %s: no certificate", caFile)
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
	return &api{hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}, token: strings.TrimSpace(string(tok))}, nil
}

func url(b *board, path string) string { return "https://" + b.addr + ":8443" + path }

// do sends one request; the body is returned with the status.
func (a *api) do(ctx context.Context, method string, b *board, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url(b, path), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// getJSON GETs path into v; an error unless 200.
func (a *api) getJSON(ctx context.Context, b *board, path string, v any) error {
	code, body, err := a.do(ctx, http.MethodGet, b, path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("field: GET %s on %s: %d %s", path, b.name, code, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}

// clusterView is GET /api/cluster as far as the checks read it.
type clusterView struct {
	Master string `json:"master"`
	Self   string `json:"self"`
	Nodes  []struct {
		Name     string `json:"name"`
		Runstate string `json:"runstate"`
	} `json:"nodes"`
}

// boardView is GET /api/board as far as the checks read it.
type boardView struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	PID     int     `json:"pid"`
	UptimeS float64 `json:"uptime_s"`
	Master  string  `json:"master"`
	Upgrade *struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
	} `json:"last_upgrade"`
}

type deviceView struct {
	Name  string `json:"name"`
	Node  string `json:"node"`
	State string `json:"state"`
	Value any    `json:"value"`
}

// poll calls f every interval until it returns nil or ctx ends; the last
// error is returned then.
func poll(ctx context.Context, every time.Duration, f func(context.Context) error) error {
	var last error
	for {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		last = f(c)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(every):
		}
	}
}
