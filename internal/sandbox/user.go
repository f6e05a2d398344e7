package sandbox

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// Capabilities a process that is not root needs to start programs as
// another user (SETUID, SETGID) and to kill them (KILL: they are no longer
// its own).
const (
	capKill   = 5
	capSetgid = 6
	capSetuid = 7
)

// credential is who programs run as when Config.User names someone: that
// user's uid and primary group, no supplementary groups (so not ews's
// group, which may read /etc/ews). It refuses root, ews's own user, and a
// process that may not change user (neither root nor holding CAP_SETUID
// and CAP_SETGID).
func credential(name string) (*ids, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: user %q: %v (create it: adduser --system --group --no-create-home %s)", name, err, name)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("sandbox: user %q: uid %q, gid %q are not numbers", name, u.Uid, u.Gid)
	}
	switch {
	case uid == 0:
		return nil, fmt.Errorf("sandbox: user %q is root: programs would read every secret; name an unprivileged user", name)
	case int(uid) == os.Geteuid():
		return nil, fmt.Errorf("sandbox: user %q is the user ews runs as: programs could read its secrets; name another user", name)
	case !mayChangeUser():
		return nil, fmt.Errorf("sandbox: user %q: ews runs as uid %d without CAP_SETUID, CAP_SETGID and CAP_KILL, so it cannot start programs as another user and stop them; run it as root or grant the three (packaging/ews.service does), or remove [cgi] user", name, os.Geteuid())
	}
	return &ids{uid: int(uid), gid: int(gid)}, nil
}

// mayChangeUser reports whether this process may setuid/setgid to anyone
// and signal what runs there.
func mayChangeUser() bool {
	if os.Geteuid() == 0 {
		return true
	}
	eff, err := capsOf("CapEff")
	const need = 1<<capSetuid | 1<<capSetgid | 1<<capKill
	return err == nil && eff&need == need
}

// DefaultUser is the user programs run as when Config.User is unset, if it
// exists (the .deb and flash.sh create it) and ews may change user.
const DefaultUser = "ews-cgi"

// defaultUser is DefaultUser when it can be used, else "" (with a warning
// when it exists but ews may not change user).
func defaultUser(c Config) string {
	u, err := user.Lookup(DefaultUser)
	if err != nil || u.Uid == strconv.Itoa(os.Geteuid()) {
		return ""
	}
	if !mayChangeUser() {
		c.Logger.Warn(c.Name+": user "+DefaultUser+" exists but ews may not change user (no CAP_SETUID, CAP_SETGID and CAP_KILL): "+c.What+" run as ews and can read its secrets", "uid", os.Geteuid())
		return ""
	}
	return DefaultUser
}
