package node

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/internal/httpx"
)

// caPath is where every board offers the cluster CA's certificate: public
// data (no key), what a browser or a client imports to trust the boards'
// HTTPS (docs/guide/trust-the-ca.md).
const caPath = "/api/cluster/ca"

// caRoutes mounts GET /api/cluster/ca: the CA as ca.pem, 404 with TLS off.
func (n *Node) caRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+caPath, func(w http.ResponseWriter, r *http.Request) {
		if n.sec.ca == nil {
			httpx.Error(w, http.StatusNotFound, "node: this board runs without TLS: it has no cluster CA")
			return
		}
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Header().Set("Content-Disposition", `attachment; filename="ca.pem"`)
		w.Header().Set("X-Ews-CA-Sha256", n.caFingerprint())
		_, _ = w.Write(n.sec.ca.PEM)
	})
}

// caFingerprint is the CA certificate's SHA-256 as browsers show it
// (upper-case hex bytes joined by colons); "" with TLS off.
func (n *Node) caFingerprint() string {
	if n.sec.ca == nil {
		return ""
	}
	sum := sha256.Sum256(n.sec.ca.Cert.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}
