package node

import (
	"net/http"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/openapi"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/backup"
	"github.com/ews-firmware/ews/node/enrolment"
	"github.com/ews-firmware/ews/node/logring"
	"github.com/ews-firmware/ews/node/users"
	"time"
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
	mux.Handle("GET /api/cluster/ca", ca)               // the cluster CA, public (clustertls.CAPath)
	n.acc.boards.Routes(mux)                            // POST/GET /api/cluster/revoke (node/boardrevoke)
	enrol := make([]string, 0, len(n.boot.State.Peers)) // the peers a new board is given
	for _, p := range n.boot.State.Peers {
		enrol = append(enrol, p.Name+"="+p.Addr)
	}
	enrolment.New(enrolment.Options{Admin: n.adminAudited, Peers: func() []string { return enrol }, Now: n.boot.Clock.Now,
		Logger: n.log}).Routes(mux) // POST /api/cluster/enrol (admin), GET /api/cluster/enrol/{id} (once; node/enrolment)
	n.acc.rotate.Routes(mux)     // POST/GET /api/cluster/rotate, the boards' /internal/rotate (node/rotate)
	n.acc.durable.Routes(mux)    // GET /api/cluster/raft; the log's stream and forwarded writes (boards only)
	n.dev.api.RegisterReads(mux) // device reads from the mirror, never queued
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
	ao := access.RoutesOptions{Auth: n.acc.auth, Audited: n.audited, Self: n.boot.State.Name, Scheme: n.sec.Scheme(),
		Client: &http.Client{Timeout: 2 * time.Second},
		Peers: func() (out []audit.Peer) { // the cluster's entries (admin)
			for _, b := range n.clu.cluster.Boards() {
				out = append(out, audit.Peer{Name: b.Name, HTTP: b.HTTP})
			}
			return out
		}}
	if n.boot.State.Standalone() {
		ao.Peers = func() []audit.Peer { return nil }
	}
	if n.sec.On() {
		ao.Client.Transport = &http.Transport{TLSClientConfig: n.sec.Client}
	}
	access.Routes(mux, n.acc.acct.Audit, ao) // login/logout audited, the session, GET /api/audit
	n.web.page.Routes(mux)                   // GET /api/board (node/boardpage)
	// POST /api/board/restart (admin only, audited): answer, then drain and
	// stop as on SIGTERM; `ews run` starts the same binary again
	mux.Handle("POST /api/board/restart", n.adminAudited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !n.requestExit(ExitRestart) {
			httpx.Error(w, http.StatusConflict, "node: a restart or upgrade is already under way")
			return
		}
		n.log.Warn("restart requested over HTTP", "remote", r.RemoteAddr, "mode", restartMode())
		httpx.JSON(w, http.StatusAccepted, map[string]string{"status": "restarting", "name": n.boot.State.Name, "mode": restartMode()})
	})))
	n.clu.rollout.Routes(mux) // POST/GET /api/cluster/upgrade (node/rollout)
	n.dev.upload.Routes(mux)  // POST /api/board/firmware (node/firmware)
	admin := func(h http.Handler) http.Handler { return n.acc.auth.Require(adminOnly(h)) }
	backup.New(backup.ModuleOptions{Options: n.boot.BackupOptions(), Users: n.acc.acct.Store, // `ews cluster backup` and `restore` (node/backup)
		Outputs: func() any { return []any{n.dev.outputs.Remembered(), n.dev.devs.Local()} },
		Admin:   admin, Audited: func(h http.Handler) http.Handler { return n.audited(admin(h)) }, Read: n.acc.auth.Require,
	}).Routes(mux) // GET /api/board/config, /api/board/users, /api/board/outputs
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
