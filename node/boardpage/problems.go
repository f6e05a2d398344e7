package boardpage

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"sync"
	"syscall"
)

// A kept store (config.json, users.json under state_dir) this board cannot
// read never stops it (issue 45): the board serves with what it has, takes
// the store from its peers through the durable log, and says why in its log
// and on its Board page (BoardInfo.Problems), with the owner the file needs
// and the command that fixes it.

// StoreProblem is one kept store this board could not take at start.
type StoreProblem struct {
	Store string `json:"store"` // "config" or "users"
	Path  string `json:"path"`
	Error string `json:"error"`
	Owner string `json:"owner,omitempty"` // the user the file must belong to (the one ews runs as)
	Fix   string `json:"fix"`
}

// Problems collects the problems; safe for concurrent use.
type Problems struct {
	mu       sync.Mutex
	problems []StoreProblem
}

// Report records and logs that store's kept file at path could not be
// taken (err), and what fixes it.
func (k *Problems) Report(log *slog.Logger, store, path string, err error) {
	p := diagnoseKept(store, path, err)
	log.Error(store+": the kept store is unreadable; this board serves and takes the store from its peers",
		"path", p.Path, "err", p.Error, "owner_needed", p.Owner, "fix", p.Fix)
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.problems = append(k.problems, p)
}

// List is what was reported, for the Board page.
func (k *Problems) List() []StoreProblem {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]StoreProblem(nil), k.problems...)
}

// diagnoseKept says what is wrong with a kept store and how to fix it: a
// file another user owns gets the chown that gives it to the user ews runs
// as; a file that does not decode gets moved aside (the peers' copy
// replaces it).
func diagnoseKept(store, path string, err error) StoreProblem {
	p := StoreProblem{Store: store, Path: path, Error: err.Error()}
	self := currentUser()
	if errors.Is(err, fs.ErrPermission) {
		p.Owner = self
		owner := "another user"
		if fi, serr := os.Stat(path); serr == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				owner = userName(strconv.Itoa(int(st.Uid)))
			}
		}
		p.Fix = fmt.Sprintf("the file belongs to %s, and ews runs as %s: run `chown %s: %s && chmod 0600 %s` as root, "+
			"or reboot a packaged board (its tmpfiles.d gives the stores to %s), then restart ews", owner, self, self, path, path, self)
		return p
	}
	p.Fix = fmt.Sprintf("move %s aside (e.g. to %s.bad) and restart ews: the board takes the store from its peers", path, path)
	return p
}

// currentUser is the name of the user this process runs as (its uid when
// it has no name).
func currentUser() string { return userName(strconv.Itoa(os.Geteuid())) }

func userName(uid string) string {
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}
