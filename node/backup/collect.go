package backup

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// CollectOptions say where and how `ews cluster backup` reads a cluster.
type CollectOptions struct {
	URL     string       // any board, "http(s)://host:port"
	Token   string       // bearer token (operator or admin)
	Client  *http.Client // nil: a client with a 10s timeout
	Secrets bool         // ask for unredacted configs
	Bundle  []byte       // included as cluster.bundle when Secrets
	Now     func() time.Time
}

// Collect reads the cluster table from o.URL, then every board's boot
// config and its outputs: its own at their last command and what it
// remembers of the others'. A board that cannot be read is listed in the
// manifest with why (Missing); the error is nil unless the table itself
// cannot be read.
func Collect(ctx context.Context, o CollectOptions) (Archive, error) {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || base.Host == "" {
		return Archive{}, fmt.Errorf("backup: bad --url %q: want http(s)://host:port", o.URL)
	}
	var view struct {
		Nodes []struct {
			Name string `json:"name"`
			HTTP string `json:"http"`
		} `json:"nodes"`
	}
	if err := getJSON(ctx, o, base.String()+"/api/cluster", &view); err != nil {
		return Archive{}, err
	}
	a := Archive{Configs: map[string]string{}, Manifest: Manifest{Created: o.Now().UTC(), Secrets: o.Secrets, Users: UsersNote}}
	var outputs [][]hal.Snapshot
	for _, n := range view.Nodes {
		e := BoardEntry{Name: n.Name}
		if n.HTTP == "" {
			e.Missing = "no HTTP address in the table (down since this board started?)"
			a.Manifest.Boards = append(a.Manifest.Boards, e)
			continue
		}
		board := base.Scheme + "://" + n.HTTP
		q := ""
		if o.Secrets {
			q = "?secrets=1"
		}
		var bc BoardConfig
		if err := getJSON(ctx, o, board+Path+q, &bc); err != nil {
			e.Missing = err.Error()
		} else {
			a.Configs[n.Name] = bc.Config
			e.Path, e.SHA256, e.Redacted = bc.Path, bc.SHA256, bc.Redacted
			if len(a.Manifest.Cluster.Peers) == 0 {
				a.Manifest.Cluster = bc.Cluster
			} else if !a.Manifest.Cluster.Same(bc.Cluster) {
				e.Missing = fmt.Sprintf("board is of cluster %s, not %s", bc.Cluster, a.Manifest.Cluster)
				delete(a.Configs, n.Name)
			}
		}
		if list, err := localOutputs(ctx, o, board); err == nil {
			outputs = append(outputs, list...)
		} else if e.Missing == "" {
			e.Missing = "outputs: " + err.Error()
		}
		a.Manifest.Boards = append(a.Manifest.Boards, e)
	}
	a.Outputs = Merge(outputs...)
	if o.Secrets {
		a.Bundle = o.Bundle
	}
	return a, nil
}

func getJSON(ctx context.Context, o CollectOptions, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return fmt.Errorf("backup: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("backup: GET %s: %s %s", u, resp.Status, e.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("backup: GET %s: %w", u, err)
	}
	return nil
}

// localOutputs reads the opening events of a board's local stream:
// "outputs" (what it remembers of the others) and "devices" (its own).
func localOutputs(ctx context.Context, o CollectOptions, board string) ([][]hal.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, board+"/events?scope=local", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	c := *o.Client
	c.Timeout = 0 // a stream: ctx bounds it
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("local stream: %s", resp.Status)
	}
	var out [][]hal.Snapshot
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || (event != "outputs" && event != "devices") {
			continue
		}
		var list []hal.Snapshot
		if err := json.Unmarshal([]byte(data), &list); err != nil {
			return nil, fmt.Errorf("local stream %s: %w", event, err)
		}
		out = append(out, list)
		if event == "devices" { // comes after outputs: done
			return out, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("local stream: %w", err)
	}
	return nil, fmt.Errorf("local stream ended before its devices")
}
