package backup

// `ews cluster restore` of the cluster's two stores (docs/NOTES.md
// "Backups hold everything"): on a running cluster through its API, each
// as the store's next version; on a card into the files its board seeds
// the stores from. Both check the whole backup before they change
// anything.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/users"
	"github.com/pelletier/go-toml/v2"
)

// CheckFunc checks a configuration store document as a board whose boot
// config is boot would (`ews config check`); it answers the problems, each
// naming its line and key.
type CheckFunc func(text, boot []byte) []string

// CheckStores checks the backup's stores before a restore writes
// anything: the configuration document against check (with board's boot
// config, or the first board's when board is ""), the users (names,
// roles, an admin). The error names the archive's entry and every
// problem.
func CheckStores(a Archive, board string, check CheckFunc) error {
	if a.Config == "" && a.Users == nil {
		return errors.New("backup: the backup holds neither the configuration store nor the users store (an older ews made it, or they could not be read: see its manifest)")
	}
	if a.Config != "" && check != nil {
		boot := a.Configs[board]
		if board == "" {
			for _, b := range a.Manifest.Boards {
				if c, ok := a.Configs[b.Name]; ok {
					boot = c
					break
				}
			}
		}
		if ps := check([]byte(a.Config), []byte(boot)); len(ps) > 0 {
			return fmt.Errorf("backup: the backup's configuration document (%s) fails `ews config check`, nothing restored:\n  %s", StoreConfigEntry, strings.Join(ps, "\n  "))
		}
	}
	if a.Users != nil {
		if err := users.CheckRestore(a.Users.Users); err != nil {
			return fmt.Errorf("backup: the backup's users (%s), nothing restored: %w", StoreUsersEntry, err)
		}
	}
	return nil
}

// RestoreOptions say where `ews cluster restore --url` puts the stores.
type RestoreOptions struct {
	URL    string       // any board of the running cluster
	Token  string       // an admin's token
	Client *http.Client // nil: a client with a 10s timeout
	Check  CheckFunc
}

// StoresResult says what RestoreStores did.
type StoresResult struct {
	ConfigVersion uint64 // the configuration store's new version; 0 when left as it was
	UsersVersion  uint64 // the users store's new version; 0 when not restored
	Notes         []string
}

// RestoreStores puts a's stores back on a running cluster: the
// configuration document as the store's next version (PUT /api/config
// with If-Match; left alone when it already holds that text), then the
// users (PUT UsersPath with If-Match). Everything is checked first
// (CheckStores), so a bad backup changes nothing; a refusal of the
// configuration stops before the users.
func RestoreStores(ctx context.Context, a Archive, o RestoreOptions) (StoresResult, error) {
	var res StoresResult
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	base, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || base.Host == "" {
		return res, fmt.Errorf("backup: bad --url %q: want http(s)://host:port", o.URL)
	}
	if err := CheckStores(a, "", o.Check); err != nil {
		return res, err
	}
	co := CollectOptions{Token: o.Token, Client: o.Client}
	if a.Config != "" {
		cur, tag, err := getText(ctx, co, base.String()+ConfigPath)
		if err != nil {
			return res, err
		}
		if strings.TrimSpace(cur) == strings.TrimSpace(a.Config) {
			res.Notes = append(res.Notes, fmt.Sprintf("the configuration store already holds the backup's document (version %s)", strings.Trim(tag, `"`)))
		} else {
			var v struct {
				Version uint64 `json:"version"`
			}
			if err := put(ctx, o, base.String()+ConfigPath, "application/toml", tag, []byte(a.Config), &v); err != nil {
				return res, err
			}
			res.ConfigVersion = v.Version
		}
	} else {
		res.Notes = append(res.Notes, "the backup holds no configuration store: left as it is")
	}
	if a.Users != nil {
		var cur users.Doc
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+UsersPath, nil)
		tag, err := do(o, req, &cur)
		if err != nil {
			return res, fmt.Errorf("%w (the configuration store is restored, the users are not)", err)
		}
		body, _ := json.Marshal(users.Doc{Users: a.Users.Users})
		var v struct {
			Version uint64 `json:"version"`
		}
		if err := put(ctx, o, base.String()+UsersPath, "application/json", tag, body, &v); err != nil {
			return res, fmt.Errorf("%w (the configuration store is restored, the users are not)", err)
		}
		res.UsersVersion = v.Version
		if !a.Manifest.Secrets {
			res.Notes = append(res.Notes, "the backup holds no credentials (no --secrets): users keep the ones they have here; a user new here needs `ews user rotate` or a password")
		}
	} else {
		res.Notes = append(res.Notes, "the backup holds no users store: left as it is")
	}
	return res, nil
}

// put sends body with If-Match: tag and decodes the answer into v; a
// refusal is an error carrying every problem the board named.
func put(ctx context.Context, o RestoreOptions, u, ctype, tag string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("If-Match", tag)
	_, err = do(o, req, v)
	return err
}

// do sends req with the token and decodes a 200's JSON into v; it answers
// the ETag.
func do(o RestoreOptions, req *http.Request, v any) (string, error) {
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("backup: %s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxEntry))
	if resp.StatusCode != http.StatusOK {
		var e confstore.Refusal
		_ = json.Unmarshal(b, &e)
		msg := e.Error
		if len(e.Problems) > 0 {
			msg = "refused, nothing changed:"
		}
		for _, p := range e.Problems {
			msg += "\n  " + p.Text
		}
		if msg == "" {
			msg = strings.TrimSpace(string(b))
		}
		return "", fmt.Errorf("backup: %s %s: %s %s", req.Method, req.URL.Path, resp.Status, msg)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return "", fmt.Errorf("backup: %s %s: %w", req.Method, req.URL.Path, err)
	}
	return resp.Header.Get("ETag"), nil
}

// DefaultStateDir is [node] state_dir's default on a board.
const DefaultStateDir = "/var/lib/ews"

// WriteStores writes a's stores into the state directory of board on its
// card's mounted root partition (root/<state_dir>): config.json, the
// configuration store as a board keeps it, and users.json; a board whose
// cluster has no durable log yet seeds the log from them (node/confstore
// Seed, node/users Import). A file already there is kept, with a warning.
// Call CheckStores first.
func WriteStores(a Archive, board, root string) (CardResult, error) {
	var res CardResult
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("backup: %s: not a directory (is the card's root partition mounted?)", root)
	}
	dir := filepath.Join(root, stateDirOf(a.Configs[board]))
	keep := func(p string, data []byte, mode os.FileMode) error {
		if _, err := os.Stat(p); err == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s exists: kept (the board's own store)", p))
			return nil
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		if err := write(p, data, mode); err != nil {
			return err
		}
		if err := giveToService(root, p); err != nil {
			return fmt.Errorf("backup: give %s to user %s: %w", p, ServiceUser, err)
		}
		res.Wrote = append(res.Wrote, p)
		return nil
	}
	if a.Config != "" {
		when := a.Manifest.Created
		v := confstore.Version{Number: max(a.Manifest.ConfigVersion, 1), Who: "backup", When: when,
			Note: "restored from the backup of " + when.Format(time.RFC3339), Text: a.Config}
		js, _ := json.Marshal(struct {
			V        uint8               `json:"v"`
			Versions []confstore.Version `json:"versions"`
		}{1, []confstore.Version{v}})
		if _, ok := confstore.Kept(js); !ok {
			return res, errors.New("backup: the configuration store's file format changed: this ews cannot write it")
		}
		if err := keep(filepath.Join(dir, "config.json"), js, 0o600); err != nil {
			return res, err
		}
	}
	if a.Users != nil {
		d := *a.Users
		d.Version = max(d.Version, 1)
		js, _ := json.Marshal(d)
		if err := keep(filepath.Join(dir, "users.json"), js, 0o600); err != nil {
			return res, err
		}
		if !a.Manifest.Secrets {
			res.Warnings = append(res.Warnings, "the backup holds no credentials (no --secrets): the restored users have none until an admin rotates their tokens")
		}
	}
	return res, nil
}

// stateDirOf is [node] state_dir of a boot config, relative to the root.
func stateDirOf(conf string) string {
	var f struct {
		Node struct {
			StateDir string `toml:"state_dir"`
		} `toml:"node"`
	}
	_ = toml.Unmarshal([]byte(conf), &f)
	if f.Node.StateDir == "" {
		f.Node.StateDir = DefaultStateDir
	}
	return strings.TrimPrefix(filepath.Clean("/"+f.Node.StateDir), "/")
}
