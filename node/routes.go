package node

import (
	"net/http"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/openapi"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/guard"
	"github.com/ews-firmware/ews/node/logring"
	"github.com/ews-firmware/ews/node/users"
	"github.com/ews-firmware/ews/webui"
)

// routes mounts every endpoint of docs/DESIGN.md. Health, metrics, the cluster
// table, events and login are served by this board at once; everything
// else is work (device API, CGI, pages, see work) that enters the master's
// queue through the front door build made.
func (n *Node) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpx.JSON(w, http.StatusOK, map[string]string{"status": "ok", "name": n.boot.State.Name})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !n.Ready() {
			httpx.Unavailable(w, 0, "not ready")
			return
		}
		httpx.JSON(w, http.StatusOK, map[string]string{"status": "ready", "name": n.boot.State.Name})
	})
	mux.Handle("GET /metrics", n.readAuth(n.reg.Handler())) // read_auth: its build info names the version
	n.clu.view.Routes(mux)                                  // GET /api/cluster (node/clusterview)
	// the API's own description (docs/openapi.yaml), public like the UI's files
	mux.Handle("GET /api/openapi.json", openapi.Handler())
	ca := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.Error(w, http.StatusNotFound, "node: this board runs without TLS: it has no cluster CA")
	})
	if n.sec.CA != nil {
		ca = clustertls.CAHandler(n.sec.CA).ServeHTTP
	}
	mux.Handle("GET /api/cluster/ca", ca) // the cluster CA, public (clustertls.CAPath)
	n.acc.boards.Routes(mux)              // POST/GET /api/cluster/revoke (node/boardrevoke)
	n.enrolment().Routes(mux)             // POST /api/cluster/enrol (admin), GET /api/cluster/enrol/{id} (once; node/enrolment)
	n.acc.rotate.Routes(mux)              // POST/GET /api/cluster/rotate, the boards' /internal/rotate (node/rotate)
	n.acc.durable.Routes(mux)             // GET /api/cluster/raft; the log's stream and forwarded writes (boards only)
	n.dev.api.RegisterReads(mux)          // device reads from the mirror, never queued
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("scope") {
		case "local":
			if done, ok := n.acc.peers.Stream(w, r); ok { // boards only (docs/NOTES.md "Peer streams")
				defer done()
				n.web.localHub.ServeHTTP(w, r)
			}
			return
		case "log":
			n.acc.auth.Require(adminOnly(n.web.logHub)).ServeHTTP(w, r) // admin only
			return
		}
		n.readAuth(n.web.hub).ServeHTTP(w, r)
	})
	n.accountRoutes(mux)                                                                        // login/logout audited, GET /api/audit
	n.web.page.Routes(mux)                                                                      // GET /api/board (node/boardpage)
	mux.Handle("POST /api/board/restart", n.adminAudited(http.HandlerFunc(n.serveRestart)))     // admin only, audited
	n.clu.rollout.Routes(mux)                                                                   // POST/GET /api/cluster/upgrade (node/rollout)
	n.dev.upload.Routes(mux)                                                                    // POST /api/board/firmware (node/firmware)
	n.openBackup().Routes(mux)                                                                  // GET /api/board/config, /api/board/users, /api/board/outputs (node/backup)
	mux.Handle("GET "+logring.Path, n.acc.auth.Require(adminOnly(logring.Handler(n.set.logs)))) // the board page's Log panel (admin only)
	n.acc.live.Routes(mux)                                                                      // /api/config: the configuration store (node/liveconf)
	mux.Handle("/", n.web.front)
}

// readAuth asks for credentials before h with [http] read_auth (docs/NOTES.md "read_auth means read").
func (n *Node) readAuth(h http.Handler) http.Handler {
	if !n.boot.ReadAuth {
		return h
	}
	return n.acc.auth.Require(h)
}

// work is what runs on the board a request is dispatched to: the device
// API, CGI and the pages.
func (n *Node) work() http.Handler {
	work := http.NewServeMux()
	n.dev.api.Register(work)
	n.dev.hist.Routes(work) // GET /api/devices/{name}/history
	work.Handle("/cgi-bin/", n.acc.auth.Require(n.dev.cgi))
	n.acc.acct.Store.Register(work, who) // /api/users (pinned to the master)
	for pattern, h := range n.set.routes {
		work.Handle(pattern, h)
	}
	work.Handle("/", guard.PageCost(webui.Handler(), n.boot.PageLatency, n.clu.sim.Slowdown)) // [sim] page_latency
	return n.audited(work)                                                                    // acts audited where they run
}

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
