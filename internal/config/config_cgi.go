package config

import (
	"os/user"
	"strings"
)

// validateCGI checks [cgi]'s limits and user name; checkCGIUser looks the
// user up on this host.
func (c *Config) validateCGI(bad func(string, string, ...any)) {
	g := c.CGI
	if g.Timeout.Duration <= 0 {
		bad("cgi.timeout", "must be positive, got %v", g.Timeout.Duration)
	}
	if g.MaxOutput < 1 {
		bad("cgi.max_output", "must be at least 1 byte, got %d", g.MaxOutput)
	}
	if g.CPUSeconds < 1 {
		bad("cgi.cpu_seconds", "must be at least 1 (seconds of CPU time a program may use), got %d", g.CPUSeconds)
	}
	if g.MaxMemory < 16<<20 {
		bad("cgi.max_memory", "must be at least 16 MiB (16777216; bytes of address space a program may use), got %d", g.MaxMemory)
	}
	if g.MaxProcesses < 1 {
		bad("cgi.max_processes", "must be at least 1 (processes [cgi] user may run at once), got %d", g.MaxProcesses)
	}
	if u := g.User; u != "" && (u == "root" || u == "0" || strings.ContainsAny(u, " \t:/")) {
		bad("cgi.user", "%q: name an unprivileged user of its own (e.g. ews-cgi), not root", u)
	} else if u == ServiceGroup {
		bad("cgi.user", "%q is the user ews runs as: programs could read its secrets; name another (e.g. ews-cgi)", u)
	}
}

// checkCGIUser looks cgi.user up as `ews run` does: it must exist, not be
// root, and not be in ServiceGroup (which may read /etc/ews/token).
func (c *Config) checkCGIUser(errs, warns Errors) (Errors, Errors) {
	name := c.CGI.User
	if name == "" {
		return errs, warns
	}
	u, err := user.Lookup(name)
	switch {
	case err != nil:
		e := c.Errorf("cgi.user", "%v (create it: adduser --system --group --no-create-home %s)", err, name)
		e.Err = err
		return append(errs, e), warns
	case u.Uid == "0":
		return append(errs, c.Errorf("cgi.user", "%q is root: programs would read every secret", name)), warns
	}
	gids, _ := u.GroupIds()
	for _, id := range gids {
		if g, err := user.LookupGroupId(id); err == nil && g.Name == ServiceGroup {
			warns = append(warns, c.warnf("cgi.user", "%q is in group %s, which may read the token: programs could read it too (deluser %s %s)", name, ServiceGroup, name, ServiceGroup))
			break
		}
	}
	return errs, warns
}
