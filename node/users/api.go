package users

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/durable"
)

// Register mounts the users API on mux. who names the request's verdict
// (the credential check ran before); every path but a user's own password
// change is admin only, as Rights says, and checked here again.
//
//	GET    /api/users                    the users, no secrets
//	POST   /api/users                    {"name","role","devices"} → 201 with "token", shown once
//	PUT    /api/users/{name}             {"role","devices"}: change a user's rights
//	DELETE /api/users/{name}
//	POST   /api/users/{name}/rotate      → {"token"}: a new token, the password cleared, sessions ended
//	POST   /api/users/{name}/password    {"password", "old_password"}: old_password when it is the caller's own
//
// Writes are committed by the cluster's durable log before they are
// answered; a side of the network without a majority of its voters
// answers 503 "no quorum: N of M voters reachable" with Retry-After.
// Reads are this board's copy, with its version.
func (s *Store) Register(mux *http.ServeMux, who func(*http.Request) *Principal) {
	guard := func(h http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if code, msg := Rights(who(r), r); code != 0 {
				httpx.Error(w, code, "%s", msg)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			h(w, r)
		})
	}
	mux.Handle("GET /api/users", guard(s.serveList))
	mux.Handle("POST /api/users", guard(s.serveCreate))
	mux.Handle("PUT /api/users/{name}", guard(s.serveUpdate))
	mux.Handle("DELETE /api/users/{name}", guard(s.serveDelete))
	mux.Handle("POST /api/users/{name}/rotate", guard(s.serveRotate))
	mux.Handle("POST /api/users/{name}/password", guard(func(w http.ResponseWriter, r *http.Request) {
		s.servePassword(w, r, who(r))
	}))
}

// UserView is a user as the API shows it.
type UserView struct {
	Name        string    `json:"name"`
	Role        string    `json:"role"`
	Devices     []string  `json:"devices"`
	HasToken    bool      `json:"has_token"`
	HasPassword bool      `json:"has_password"`
	Created     time.Time `json:"created,omitzero"`
	Token       string    `json:"token,omitempty"`   // only in the answer that mints it
	Warning     string    `json:"warning,omitempty"` // e.g. a pattern that matches no device
}

func view(u User) UserView {
	return UserView{Name: u.Name, Role: u.Role, Devices: append([]string{}, u.Devices...), HasToken: len(u.Token) > 0,
		HasPassword: u.Password != "", Created: u.Created}
}

func (s *Store) serveList(w http.ResponseWriter, r *http.Request) {
	d := s.Doc()
	out := make([]UserView, 0, len(d.Users))
	for _, u := range d.Users {
		out = append(out, view(u))
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"version": d.Version, "users": out})
}

// apiError is an error with its status.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// answer writes err with its status.
func answer(w http.ResponseWriter, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		httpx.Error(w, ae.code, "%s", ae.msg)
	default:
		durable.Answer(w, err, errMoved)
	}
}

type rightsBody struct {
	Name    string   `json:"name"`
	Role    string   `json:"role"`
	Devices []string `json:"devices"`
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(http.StatusBadRequest, "users: body: %v", err)
	}
	return nil
}

// checkRights validates a role and its device patterns; the warning names
// patterns that match no device of the cluster (allowed: a device may come).
func (s *Store) checkRights(role string, devices []string) (string, error) {
	if !validRole(role) {
		return "", fail(http.StatusBadRequest, "users: unknown role %q (viewer, operator or admin)", role)
	}
	if role != RoleOperator && len(devices) > 0 {
		return "", fail(http.StatusBadRequest, "users: devices are for operators; a %s has rights on %s", role, map[string]string{RoleViewer: "no device", RoleAdmin: "every device"}[role])
	}
	if len(devices) > 64 {
		return "", fail(http.StatusBadRequest, "users: at most 64 device patterns")
	}
	var names []string
	if s.opts.Devices != nil {
		names = s.opts.Devices()
	}
	var none []string
	for _, p := range devices {
		if p == "" || len(p) > 64 {
			return "", fail(http.StatusBadRequest, "users: device pattern %.70q: empty or over 64 bytes", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return "", fail(http.StatusBadRequest, "users: device pattern %q: %v", p, err)
		}
		if s.opts.Devices != nil && !slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(p, n); return ok }) {
			none = append(none, p)
		}
	}
	if len(none) > 0 {
		return fmt.Sprintf("device patterns %q match no device now", none), nil
	}
	return "", nil
}

func (s *Store) serveCreate(w http.ResponseWriter, r *http.Request) {
	var b rightsBody
	if err := decode(r, &b); err != nil {
		answer(w, err)
		return
	}
	if err := validName(b.Name); err != nil {
		answer(w, fail(http.StatusBadRequest, "%v", err))
		return
	}
	warn, err := s.checkRights(b.Role, b.Devices)
	if err != nil {
		answer(w, err)
		return
	}
	tok := newToken()
	var u User
	err = s.mutate(r.Context(), func(d *Doc) error {
		if slices.ContainsFunc(d.Users, func(u User) bool { return u.Name == b.Name }) {
			return fail(http.StatusConflict, "users: user %q exists", b.Name)
		}
		h := s.hashToken(tok)
		u = User{Name: b.Name, Role: b.Role, Devices: b.Devices, Token: h[:], TokenKey: publicOf(tokenKey(tok)), Gen: d.Version, Created: s.opts.Now().UTC()}
		d.Users = append(d.Users, u)
		return nil
	})
	if err != nil {
		answer(w, err)
		return
	}
	v := view(u)
	v.Token, v.Warning = tok, warn
	w.Header().Set("X-Ews-User", u.Name) // the audit log's target
	httpx.JSON(w, http.StatusCreated, v)
}

// edit changes user name in a new version; f gets the user to change.
func (s *Store) edit(ctx context.Context, name string, f func(d *Doc, u *User) error) error {
	return s.mutate(ctx, func(d *Doc) error {
		i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == name })
		if i < 0 {
			return fail(http.StatusNotFound, "users: no user %q", name)
		}
		return f(d, &d.Users[i])
	})
}

// admins counts the admins of d other than name.
func admins(d *Doc, except string) int {
	n := 0
	for _, u := range d.Users {
		if u.Role == RoleAdmin && u.Name != except {
			n++
		}
	}
	return n
}

func (s *Store) serveUpdate(w http.ResponseWriter, r *http.Request) {
	var b rightsBody
	if err := decode(r, &b); err != nil {
		answer(w, err)
		return
	}
	warn, err := s.checkRights(b.Role, b.Devices)
	if err != nil {
		answer(w, err)
		return
	}
	var u User
	err = s.edit(r.Context(), r.PathValue("name"), func(d *Doc, p *User) error {
		if p.Role == RoleAdmin && b.Role != RoleAdmin && admins(d, p.Name) == 0 {
			return fail(http.StatusConflict, "users: %q is the last admin", p.Name)
		}
		p.Role, p.Devices = b.Role, b.Devices
		p.Gen = d.Version // rights changed: sessions carry the old ones
		u = *p
		return nil
	})
	if err != nil {
		answer(w, err)
		return
	}
	v := view(u)
	v.Warning = warn
	httpx.JSON(w, http.StatusOK, v)
}

func (s *Store) serveDelete(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := s.edit(r.Context(), name, func(d *Doc, p *User) error {
		if p.Role == RoleAdmin && admins(d, name) == 0 {
			return fail(http.StatusConflict, "users: %q is the last admin", name)
		}
		d.Users = slices.DeleteFunc(d.Users, func(u User) bool { return u.Name == name })
		return nil
	})
	if err != nil {
		answer(w, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"deleted": name})
}

// serveRotate ends every credential of a user and mints a new token: the
// token and the password both (a password a thief set from a stolen
// session must not outlive the rotation meant to lock them out), and with
// Gen every session. The user sets a password again with the new token.
func (s *Store) serveRotate(w http.ResponseWriter, r *http.Request) {
	tok := newToken()
	err := s.edit(r.Context(), r.PathValue("name"), func(d *Doc, p *User) error {
		h := s.hashToken(tok)
		p.Token, p.TokenKey = h[:], publicOf(tokenKey(tok))
		p.Password, p.PassKey, p.PassSalt = "", nil, nil
		p.Gen = d.Version
		return nil
	})
	if err != nil {
		answer(w, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]string{"token": tok})
}

// MaxPassword bounds a password (argon2 takes any length; a bound keeps a
// request cheap).
const MaxPassword = 256

// servePassword sets a user's password. A person changing their own (by
// whatever credential: a session cookie may be a stolen one) gives the
// current one in old_password when they have one; an admin setting
// another user's gives none. The automation's principals (a board alone's
// token, the board credential) are no person and need none either.
func (s *Store) servePassword(w http.ResponseWriter, r *http.Request, by *Principal) {
	var b struct {
		Password    string `json:"password"`
		OldPassword string `json:"old_password"`
	}
	if err := decode(r, &b); err != nil {
		answer(w, err)
		return
	}
	if len(b.Password) < s.opts.MinPassword || len(b.Password) > MaxPassword {
		answer(w, fail(http.StatusBadRequest, "users: weak password: want %d to %d characters", s.opts.MinPassword, MaxPassword))
		return
	}
	name := r.PathValue("name")
	var was string // the hash old_password was checked against; "" none
	if by != nil && by.Name == name && by != Root() && by != Board() {
		for _, u := range s.Doc().Users {
			if u.Name == name {
				was = u.Password
			}
		}
		if was != "" {
			if err := s.checkOld(was, b.OldPassword); err != nil {
				answer(w, err)
				return
			}
		}
	}
	kdfSlots <- struct{}{}
	enc := hashPassword(b.Password)
	<-kdfSlots
	salt, pub := newPassKey(b.Password)
	err := s.edit(r.Context(), name, func(d *Doc, p *User) error {
		if p.Password != was && by != nil && by.Name == name && by != Root() && by != Board() {
			return fail(http.StatusConflict, "users: %q's password changed during the request: try again", name)
		}
		p.Password, p.PassKey, p.PassSalt = enc, pub, salt
		p.Gen = d.Version
		return nil
	})
	if err != nil {
		answer(w, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true})
}

// checkOld checks old, the password a person gave to change their own,
// against its hash enc (one argon2id run, in a slot).
func (s *Store) checkOld(enc, old string) error {
	if old == "" {
		return fail(http.StatusBadRequest, "users: changing your own password needs the current one in \"old_password\"")
	}
	if len(old) > MaxPassword {
		return fail(http.StatusForbidden, "users: the current password is wrong")
	}
	kdfSlots <- struct{}{}
	ok, err := checkPassword(enc, old)
	<-kdfSlots
	if err != nil || !ok {
		return fail(http.StatusForbidden, "users: the current password is wrong")
	}
	return nil
}
