package backup

// The cluster's two stores in a backup (docs/NOTES.md "Backups hold
// everything"): the configuration store's document and the users store,
// read from one board, which serves its replica of each.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/node/users"
)

// UsersPath serves the users store whole for a backup (GET, admin only;
// ?secrets=1 adds the token and password hashes) and takes a backup's
// users back as its next version (PUT with If-Match, admin only).
const UsersPath = "/api/board/users"

// ConfigPath is the configuration store's API (node/confstore).
const ConfigPath = "/api/config"

// collectStores adds the configuration store's document and the users
// store to a; a store that cannot be read is named in a.Manifest.Stores.
func collectStores(ctx context.Context, o CollectOptions, base string, a *Archive) {
	text, tag, err := getText(ctx, o, base+ConfigPath)
	if err == nil {
		a.Config = text
		a.Manifest.ConfigVersion, _ = strconv.ParseUint(strings.Trim(tag, `"`), 10, 64)
	} else {
		a.Manifest.Stores = append(a.Manifest.Stores, "configuration store: "+err.Error())
	}
	q := ""
	if o.Secrets {
		q = "?secrets=1"
	}
	var d users.Doc
	if err := getJSON(ctx, o, base+UsersPath+q, &d); err == nil {
		a.Users = &d
		a.Manifest.UsersVersion = d.Version
	} else {
		a.Manifest.Stores = append(a.Manifest.Stores, "users store: "+err.Error())
	}
}

// getText GETs u and answers its body and ETag.
func getText(ctx context.Context, o CollectOptions, u string) (string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", "", fmt.Errorf("backup: %w", err)
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("backup: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxEntry))
	if err != nil {
		return "", "", fmt.Errorf("backup: GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("backup: GET %s: %s %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), resp.Header.Get("ETag"), nil
}
