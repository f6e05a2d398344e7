package backup

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServiceUser is the user the packaged unit runs ews as: the stores
// WriteStores puts on a card are its (issue 45).
const ServiceUser = "ews"

// cardUser is the uid and gid of name in root's /etc/passwd: the card's
// own user database, not this machine's. false when the card has no such
// user yet (a fresh card: systemd-sysusers creates it at first boot and
// the package's tmpfiles.d gives it the stores).
func cardUser(root, name string) (uid, gid int, ok bool) {
	f, err := os.Open(filepath.Join(root, "etc", "passwd"))
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 4 || fields[0] != name {
			continue
		}
		u, err1 := strconv.Atoi(fields[2])
		g, err2 := strconv.Atoi(fields[3])
		return u, g, err1 == nil && err2 == nil
	}
	return 0, 0, false
}

// giveToService gives the file at p to the card's service user when the
// card has one and this process may (root). Lchown: a link is never
// followed.
func giveToService(root, p string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, ok := cardUser(root, ServiceUser)
	if !ok {
		return nil
	}
	return os.Lchown(p, uid, gid)
}
