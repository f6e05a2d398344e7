package clustertls

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
)

// CAPath is where every board offers the cluster CA's certificate: public
// data (no key), what a browser or a client imports to trust the boards'
// HTTPS (docs/guide/trust-the-ca.md).
const CAPath = "/api/cluster/ca"

// Fingerprint is the CA certificate's SHA-256 as browsers show it
// (upper-case hex bytes joined by colons); "" for a nil CA (TLS off).
func (ca *CA) Fingerprint() string {
	if ca == nil {
		return ""
	}
	sum := sha256.Sum256(ca.Cert.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// CAHandler serves GET CAPath: ca as ca.pem with its fingerprint (a board
// with TLS off, without a CA, answers 404 itself).
func CAHandler(ca *CA) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Header().Set("Content-Disposition", `attachment; filename="ca.pem"`)
		w.Header().Set("X-Ews-CA-Sha256", ca.Fingerprint())
		_, _ = w.Write(ca.PEM)
	})
}
