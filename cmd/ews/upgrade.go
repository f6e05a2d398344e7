package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node"
)

func cmdUpgrade(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("upgrade", "--url URL --binary PATH [--token TOKEN | --token-file PATH]",
		"Rolling firmware upgrade: upload PATH to one board at a time, followers first and the master last,\nwaiting until each is back in the table, running the new binary. Stops at the first failure\n(a board that rolls back keeps its old binary). The token is also read from $EWS_TOKEN.", stderr)
	url := fs.String("url", "", "any board of the cluster, e.g. http://10.0.0.11:8080")
	bin := fs.String("binary", "", "the new ews binary (for the boards' arch)")
	token := fs.String("token", "", "API token (default $EWS_TOKEN)")
	tokenFile := fs.String("token-file", "", "file holding the API token")
	perBoard := fs.Duration("timeout", 2*time.Minute, "how long one board may take to come back")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *url == "" || *bin == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews upgrade: --url and --binary are required")
		return exitUsage
	}
	tok := *token
	if tok == "" {
		tok = os.Getenv("EWS_TOKEN")
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
			return exitUsage
		}
		tok = strings.TrimSpace(string(b))
	}
	body, err := os.ReadFile(*bin)
	if err != nil {
		fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
		return exitError
	}
	u := &upgrader{base: strings.TrimSuffix(*url, "/"), token: tok, bin: body, out: stdout, perBoard: *perBoard,
		client: &http.Client{Timeout: 5 * time.Second}, upload: &http.Client{Timeout: 5 * time.Minute}}
	sum := sha256.Sum256(body)
	u.sum = hex.EncodeToString(sum[:])
	if err := u.run(context.Background()); err != nil {
		fmt.Fprintf(stderr, "ews upgrade: %v\n", err)
		return exitError
	}
	return exitOK
}

type upgrader struct {
	base, token, sum string
	bin              []byte
	out              io.Writer
	perBoard         time.Duration
	client, upload   *http.Client
}

type upBoard struct {
	Name     string `json:"name"`
	Rank     int    `json:"rank"`
	HTTP     string `json:"http"`
	Runstate string `json:"runstate"`
}

type upView struct {
	Master string    `json:"master"`
	Nodes  []upBoard `json:"nodes"`
}

type upInfo struct {
	Version  string `json:"version"`
	SHA256   string `json:"sha256"`
	Runstate string `json:"runstate"`
	Last     *struct {
		SHA256  string `json:"sha256"`
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
		At      string `json:"at"`
	} `json:"last_upgrade"`
}

func (u *upgrader) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// order is the upgrade order: followers from the last rank up, the master last.
func order(v upView) []upBoard {
	var out []upBoard
	var master *upBoard
	for i := range v.Nodes {
		if v.Nodes[i].Name == v.Master {
			master = &v.Nodes[i]
			continue
		}
		out = append(out, v.Nodes[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank > out[j].Rank })
	if master != nil {
		out = append(out, *master)
	}
	return out
}

func (u *upgrader) run(ctx context.Context) error {
	var v upView
	if err := u.getJSON(ctx, u.base+"/api/cluster", &v); err != nil {
		return fmt.Errorf("read the table: %v", err)
	}
	if v.Master == "" {
		return errors.New("the cluster has no master now; upgrade when it has one")
	}
	for _, b := range v.Nodes {
		if b.Runstate != "running" {
			return fmt.Errorf("board %s is %s, not running: bring it back first (an upgrade takes one board out at a time)", b.Name, b.Runstate)
		}
	}
	boards := order(v)
	fmt.Fprintf(u.out, "upgrading %d boards to sha256 %s, in this order: %s\n", len(boards), u.sum[:12], names(boards))
	start := time.Now()
	for _, b := range boards {
		t0 := time.Now()
		done, err := u.one(ctx, b)
		if err != nil {
			return fmt.Errorf("%s: %v (boards after it were not touched)", b.Name, err)
		}
		fmt.Fprintf(u.out, "%s: %s (%.1f s)\n", b.Name, done, time.Since(t0).Seconds())
	}
	fmt.Fprintf(u.out, "all %d boards run sha256 %s (%.1f s)\n", len(boards), u.sum[:12], time.Since(start).Seconds())
	return nil
}

func names(bs []upBoard) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.Name)
	}
	return strings.Join(s, ", ")
}

// one upgrades board b and waits until it is back, running the new binary.
func (u *upgrader) one(ctx context.Context, b upBoard) (string, error) {
	url := "http://" + b.HTTP
	var before upInfo
	if err := u.getJSON(ctx, url+"/api/board", &before); err != nil {
		return "", err
	}
	if before.SHA256 == u.sum {
		return "already runs it, version " + before.Version, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/board/firmware", bytes.NewReader(u.bin))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(node.HeaderFirmwareSHA256, u.sum)
	if u.token != "" {
		req.Header.Set("Authorization", "Bearer "+u.token)
	}
	resp, err := u.upload.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload: %v", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("upload refused: %s %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	deadline := time.Now().Add(u.perBoard)
	for time.Now().Before(deadline) {
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return "", err
		}
		var in upInfo
		if u.getJSON(ctx, url+"/api/board", &in) != nil {
			continue // restarting
		}
		if in.Last != nil && (before.Last == nil || in.Last.At != before.Last.At) && in.Last.Outcome == "rolled back" {
			return "", fmt.Errorf("rolled back to version %s: %s", in.Version, in.Last.Reason)
		}
		if in.SHA256 != u.sum || in.Runstate != "running" {
			continue
		}
		var v upView
		if u.getJSON(ctx, url+"/api/cluster", &v) != nil || v.Master == "" {
			continue
		}
		for _, n := range v.Nodes {
			if n.Name == b.Name && n.Runstate == "running" {
				return fmt.Sprintf("version %s -> %s, back in the table (master %s)", before.Version, in.Version, v.Master), nil
			}
		}
	}
	return "", fmt.Errorf("not back running the new binary within %v", u.perBoard)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
