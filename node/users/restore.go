package users

// The users store's side of `ews cluster backup` and `ews cluster restore`
// (docs/NOTES.md "Backups hold everything"): the whole store out, and a
// backup's users back in as the store's next version.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Export is the current version for a backup; credentials (token and
// password hashes) only when withCredentials.
func (s *Store) Export(withCredentials bool) Doc {
	d := s.Doc()
	out := Doc{Version: d.Version, Epoch: d.Epoch, Users: slices.Clone(d.Users)}
	for i := range out.Users {
		out.Users[i].Devices = slices.Clone(out.Users[i].Devices)
		if !withCredentials {
			out.Users[i].Token, out.Users[i].Password = nil, ""
			out.Users[i].TokenKey, out.Users[i].PassKey, out.Users[i].PassSalt = nil, nil, nil
		}
	}
	return out
}

// CheckRestore validates a backup's users before anything is written:
// names, roles, device patterns of operators only, one admin at least.
func CheckRestore(in []User) error {
	d := Doc{Users: in}
	if err := d.valid(); err != nil {
		return err
	}
	for _, u := range in {
		if u.Role != RoleOperator && len(u.Devices) > 0 {
			return fmt.Errorf("users: user %q: devices are for operators", u.Name)
		}
	}
	return nil
}

// Restore makes in the store's next version when the current one is
// expect (*StaleRestore otherwise): every user of in with its role and
// rights; a user the backup holds without credentials keeps the ones it
// has here, if any. Every user's Gen moves, so sessions end. Users not in
// the backup are gone.
func (s *Store) Restore(r *http.Request, in []User, expect uint64) (Doc, error) {
	if err := CheckRestore(in); err != nil {
		return Doc{}, fail(http.StatusBadRequest, "%v", err)
	}
	var out Doc
	err := s.mutate(r.Context(), func(d *Doc) error {
		if d.Version-1 != expect {
			return fail(http.StatusPreconditionFailed, "users: the store is at version %d, not %d: read it again", d.Version-1, expect)
		}
		users := make([]User, 0, len(in))
		for _, u := range in {
			u.Devices = slices.Clone(u.Devices)
			i := slices.IndexFunc(d.Users, func(o User) bool { return o.Name == u.Name })
			switch {
			case len(u.Token) == 0 && u.Password == "":
				u.TokenKey, u.PassKey, u.PassSalt = nil, nil, nil // a key without its credential signs nothing
				if i >= 0 {
					o := d.Users[i]
					u.Token, u.Password, u.TokenKey, u.PassKey, u.PassSalt = o.Token, o.Password, o.TokenKey, o.PassKey, o.PassSalt
				}
			case i >= 0:
				// a backup of a build before keys: the same credential
				// here has its key, which stays with it
				o := d.Users[i]
				if len(u.TokenKey) == 0 && len(u.Token) > 0 && bytes.Equal(u.Token, o.Token) {
					u.TokenKey = o.TokenKey
				}
				if len(u.PassKey) == 0 && u.Password != "" && u.Password == o.Password {
					u.PassKey, u.PassSalt = o.PassKey, o.PassSalt
				}
			}
			u.Gen = d.Version
			if u.Created.IsZero() {
				u.Created = s.opts.Now().UTC()
			}
			users = append(users, u)
		}
		d.Users = users
		out = *d
		return nil
	})
	return out, err
}

// ServeExport is GET /api/board/users: the store for a backup, with its
// version in ETag; credentials only with ?secrets=1. The caller checks the
// admin's credentials.
func (s *Store) ServeExport(w http.ResponseWriter, r *http.Request) {
	d := s.Export(r.URL.Query().Get("secrets") == "1")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("ETag", `"`+strconv.FormatUint(d.Version, 10)+`"`)
	httpx.JSON(w, http.StatusOK, d)
}

// ServeRestore is PUT /api/board/users: a backup's Doc (only its users
// are read) becomes the next version; If-Match names the version it
// replaces (412 when stale, 428 without). The caller checks the admin's
// credentials.
func (s *Store) ServeRestore(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	tag := strings.Trim(r.Header.Get("If-Match"), `"`)
	expect, err := strconv.ParseUint(tag, 10, 64)
	if err != nil {
		answer(w, fail(http.StatusPreconditionRequired, "users: If-Match: the store's version this restore replaces (GET /api/board/users)"))
		return
	}
	var in Doc
	if err := json.NewDecoder(io.LimitReader(r.Body, MaxSealed)).Decode(&in); err != nil {
		answer(w, fail(http.StatusBadRequest, "users: body: %v", err))
		return
	}
	d, err := s.Restore(r, in.Users, expect)
	if err != nil {
		answer(w, err)
		return
	}
	w.Header().Set("ETag", `"`+strconv.FormatUint(d.Version, 10)+`"`)
	httpx.JSON(w, http.StatusOK, map[string]any{"version": d.Version, "users": len(d.Users)})
}
