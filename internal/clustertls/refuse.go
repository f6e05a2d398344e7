package clustertls

import (
	"crypto/tls"
	"fmt"
)

// RefuseBoards makes cfg refuse, at each handshake, a peer whose verified
// certificate names a board that revoked reports (docs/NOTES.md "Revoking
// a board"): on a listener a revoked board's client certificate, on a
// client a revoked board's server certificate. A peer with no
// certificate (a browser, curl) is left to cfg's own rule.
func RefuseBoards(cfg *tls.Config, revoked func(name string) bool) {
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
			return nil
		}
		if name := cs.VerifiedChains[0][0].Subject.CommonName; name != "" && revoked(name) {
			return fmt.Errorf("clustertls: board %q is revoked (ews cluster revoke)", name)
		}
		return nil
	}
}
