package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/httpx"
	"github.com/ews-firmware/ews/webui"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes mounts every endpoint of DESIGN.md. Health, metrics and the
// cluster table are served locally; the rest is the board's own work.
func (n *Node) routes(mux *http.ServeMux) error {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpx.JSON(w, http.StatusOK, map[string]string{"status": "ok", "name": n.cfg.Node.Name})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !n.Ready() {
			httpx.Unavailable(w, 0, "not ready")
			return
		}
		httpx.JSON(w, http.StatusOK, map[string]string{"status": "ready", "name": n.cfg.Node.Name})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{n.log}}))
	mux.HandleFunc("GET /api/cluster", n.serveCluster)
	for pattern, h := range n.extraRoutes {
		mux.Handle(pattern, h)
	}
	mux.Handle("/", webui.Handler())
	return nil
}
