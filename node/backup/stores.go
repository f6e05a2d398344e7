package backup

// The cluster's two stores in a backup (docs/NOTES.md "Backups hold
// everything"): the configuration store's document and the users store,
// read from one board, which serves its replica of each.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

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
	text, tag, err := getConfig(ctx, o, base)
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

// storeTries bounds how often collectStores asks again while the
// configuration store answers 503 (a cluster just started seeds it, or
// elects its log's leader, within a few seconds).
const storeTries = 5

// getConfig GETs the configuration document, asking again a second later
// while the board answers 503.
func getConfig(ctx context.Context, o CollectOptions, base string) (string, string, error) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 1; ; i++ {
		text, tag, err := getText(ctx, o, base+ConfigPath)
		var se *statusError
		if err == nil || i == storeTries || !errors.As(err, &se) || se.code != http.StatusServiceUnavailable {
			return text, tag, err
		}
		select {
		case <-ctx.Done():
			return "", "", err
		case <-t.C:
		}
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
		return "", "", &statusError{code: resp.StatusCode, msg: fmt.Sprintf("backup: GET %s: %s %s", u, resp.Status, strings.TrimSpace(string(b)))}
	}
	return string(b), resp.Header.Get("ETag"), nil
}

// statusError is a board's answer other than 200.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }
