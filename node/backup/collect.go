package backup

import (
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
	Bundle  []byte       // included as cluster.bundle when Secrets; never an admin bundle (CheckBundle)
	Now     func() time.Time
}

// Collect reads the cluster table from o.URL, then every board's boot
// config and its outputs: its own at their last command and what it
// remembers of the others', then the cluster's configuration and users
// stores from o.URL. A board that cannot be read is listed in the
// manifest with why (Missing), a store in Manifest.Stores; the error is
// nil unless the table itself cannot be read.
func Collect(ctx context.Context, o CollectOptions) (Archive, error) {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Secrets && o.Bundle != nil {
		if err := CheckBundle(o.Bundle); err != nil {
			return Archive{}, err
		}
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
	note := UsersNote
	if o.Secrets {
		note = UsersNoteSecrets
	}
	a := Archive{Configs: map[string]string{}, Manifest: Manifest{Created: o.Now().UTC(), Secrets: o.Secrets, Users: note}}
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
	collectStores(ctx, o, base.String(), &a)
	if o.Secrets && o.Bundle != nil {
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

// localOutputs reads what a board remembers of the others' outputs and
// its own devices from OutputsPath, with credentials: the boards' own
// stream is for boards only (docs/NOTES.md, Security: peer streams).
func localOutputs(ctx context.Context, o CollectOptions, board string) ([][]hal.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out [][]hal.Snapshot
	if err := getJSON(ctx, o, board+OutputsPath, &out); err != nil {
		return nil, err
	}
	return out, nil
}
