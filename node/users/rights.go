package users

import (
	"fmt"
	"net/http"
	"path"
	"strings"
)

// MaxName is the longest user name.
const MaxName = 32

func validName(n string) error {
	if n == "" {
		return fmt.Errorf("users: empty name")
	}
	if len(n) > MaxName {
		return fmt.Errorf("users: name %.40q longer than %d bytes", n, MaxName)
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("users: name %q: only letters, digits, '-', '_' and '.'", n)
		}
	}
	if strings.HasPrefix(n, "rule:") {
		return fmt.Errorf("users: name %q is reserved", n)
	}
	return nil
}

func validRole(r string) bool { return r == RoleViewer || r == RoleOperator || r == RoleAdmin }

// Controls reports whether p may act on device dev.
func (p *Principal) Controls(dev string) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleOperator:
		for _, pat := range p.Devices {
			if ok, _ := path.Match(pat, dev); ok {
				return true
			}
		}
	}
	return false
}

// Admin reports whether p is an admin.
func (p *Principal) Admin() bool { return p.Role == RoleAdmin }

// Rights is the rule of who may do what, by request: (0, "") when p may
// send r, else 403 and why. Paths it does not know are everyone's (the
// credential check itself decides whether they need credentials).
func Rights(p *Principal, r *http.Request) (int, string) {
	if p == nil {
		return http.StatusForbidden, "users: no user"
	}
	if p.Admin() {
		return 0, ""
	}
	pth, get := r.URL.Path, r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case strings.HasPrefix(pth, "/api/devices/"):
		if get {
			return 0, ""
		}
		rest := strings.TrimPrefix(pth, "/api/devices/")
		dev, _, _ := strings.Cut(rest, "/")
		if p.Role == RoleViewer {
			return http.StatusForbidden, fmt.Sprintf("users: %s %q may only read devices", p.Role, p.Name)
		}
		if !p.Controls(dev) {
			return http.StatusForbidden, fmt.Sprintf("users: operator %q may not control %q", p.Name, dev)
		}
	case strings.HasPrefix(pth, "/cgi-bin/"):
		if p.Role != RoleOperator {
			return http.StatusForbidden, fmt.Sprintf("users: %s %q may not run CGI programs", p.Role, p.Name)
		}
	case pth == "/api/users/"+p.Name+"/password" && r.Method == http.MethodPost:
		return 0, "" // a user may change their own
	case strings.HasPrefix(pth, "/api/users"), strings.HasPrefix(pth, "/api/audit"),
		strings.HasPrefix(pth, "/api/board/"), pth == "/api/cluster/upgrade" && !get:
		return http.StatusForbidden, fmt.Sprintf("users: %s %q: admin only", p.Role, p.Name)
	}
	return 0, ""
}
