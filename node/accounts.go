package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/users"
)

// who is the principal of a checked request (access.Who).
func who(r *http.Request) *users.Principal { return access.Who(r) }

// adminOnly lets only an admin through (access.AdminOnly).
func adminOnly(next http.Handler) http.Handler { return access.AdminOnly(next) }

// HeaderActor labels an automation's act in the audit log
// (access.HeaderActor).
const HeaderActor = access.HeaderActor

// inProcessKey marks a request the automation sends in process
// (access.Door).
type inProcessKey = access.InProcessKey

// audited records the acts next answers in the audit log.
func (n *Node) audited(next http.Handler) http.Handler {
	return access.Audited(n.acc.acct.Audit, n.acc.auth, next)
}

// inProcess reports whether r is the automation's own, sent in process
// (actorDoor).
func inProcess(r *http.Request) bool { return r.Context().Value(inProcessKey{}) != nil }
