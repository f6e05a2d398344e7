package node

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/openapi"
	"github.com/ews-firmware/ews/node/logring"
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
	work.Handle("/", n.pageCost(webui.Handler()))
	return n.audited(work) // acts audited where they run
}

// pageCost emulates, on a simulated board, the work of a low-priority page
// or data query ([sim] page_latency), so the demo and the benchmarks load
// the boards as real pages would. The query sim_cost=K (1 to 16) makes a
// page cost K pages: requests of different weights for the request-class
// paper's experiment (004). Boards without [sim] ignore it.
func (n *Node) pageCost(next http.Handler) http.Handler {
	d := n.boot.PageLatency // at the board's [sim] speed
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(time.Duration(float64(d) * simCost(r) * n.clu.sim.Slowdown(time.Now()))) // busy: slower
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		next.ServeHTTP(w, r)
	})
}

// simCost is a simulated page's cost in pages: its query's sim_cost, 1 when
// absent or out of [1, 16].
func simCost(r *http.Request) float64 {
	if r.URL.RawQuery == "" {
		return 1
	}
	k, err := strconv.Atoi(r.URL.Query().Get("sim_cost"))
	if err != nil || k < 1 || k > 16 {
		return 1
	}
	return float64(k)
}
