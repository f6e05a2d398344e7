package node

import (
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/state"
)

// security is what this board holds from the cluster bundle: the TLS
// configs made from its CA (nil: TLS off) and the session secret.
type security struct {
	ca      *clustertls.CA
	cert    tls.Certificate
	server  *tls.Config       // the HTTPS listener: asks peers for their certificate
	client  *tls.Config       // requests to peers: trusts the CA, presents cert
	session []byte            // keys session cookies
	verify  ed25519.PublicKey // firmware signing key's public half; nil: no firmware accepted
	handoff bool              // session is this process's own random key (SessionHandoff)
	// identity signs this board's gossip (state.Config.Identity): its
	// certificate from the cluster CA and its key; nil without one.
	identity *state.Identity
}

// on reports whether this board serves and speaks HTTPS.
func (s *security) on() bool { return s.server != nil }

// scheme is the scheme of URLs to other boards.
func (s *security) scheme() string {
	if s.on() {
		return "https"
	}
	return "http"
}

// openSecurity reads the bundle (cluster.bundle_file) and, with TLS on,
// issues this board's certificate from the CA: its name and every host
// the board is known by. The session secret is the bundle's, else derived
// from the cluster key (random, per cluster, never sent over HTTP), else
// none: then auth makes a per-process one and sessions hold on this board
// only.
func openSecurity(b *bootconf.Boot, log *slog.Logger) (security, error) {
	var sec security
	s := b.Security
	for _, note := range s.Notes {
		log.Warn(note)
	}
	if s.Bundle != nil {
		sec.session = s.Bundle.Session()
	}
	sec.verify = s.Verify
	if sec.session == nil {
		if k := b.ClusterKey; len(k) > 0 {
			sec.session = k
		}
	}
	if len(b.Rotated.Key) > 0 { // the card's, or a rotation's kept under state_dir (node/bootconf)
		primary, _ := b.Rotated.Keys()
		sec.session = primary.Session
	}
	if sec.session == nil {
		// No bundle and no cluster key (a standalone board): a random key of
		// this process, handed to the process that replaces it on a restart
		// or firmware upgrade (SessionHandoff), so logins survive those.
		k, err := sessionFromEnv()
		if err != nil {
			return sec, err
		}
		sec.session, sec.handoff = k, true
	}
	if s.Minted && s.CA != nil { // a board bundle: its certificate, with TLS on or off
		sec.identity = gossipIdentity(s.Cert, s.CA)
		if s.Cert.Leaf != nil {
			b.Clock.Floor(clustertls.MintedAt(s.Cert.Leaf), "its certificate's minting", log)
		}
	}
	if !s.TLS {
		if !b.State.Standalone() {
			// docs/DESIGN.md, Trust: every card holds the one cluster key
			log.Warn("cluster: TLS is off: a board proves itself with the cluster key that every card holds, so a stolen or revoked card can still mark requests and read gossip until `ews cluster rotate`; give the boards bundles with a CA (ews cluster init, ews cluster board)")
		}
		return sec, nil
	}
	cert := s.Cert // minted off the board (a board bundle)
	if !s.Minted {
		var err error
		if cert, err = s.CA.Issue(b.State.Name, s.Hosts); err != nil { // a version 2 bundle
			return sec, b.Cite("cluster.bundle_file", err)
		}
	}
	sec.ca, sec.cert = s.CA, cert
	sec.server, sec.client = s.CA.ServerConfig(cert), s.CA.ClientConfig(cert)
	sec.server.Time, sec.client.Time = b.Clock.Now, b.Clock.Now // peers' certificates in cluster time (docs/DESIGN.md, Time)
	sec.identity = gossipIdentity(cert, s.CA)
	if sec.identity != nil {
		// a peer that saw this board seal and then hears it unsealed asks
		// here whether it was rolled back (invariant 11): this build
		// seals, and says so in the handshake its certificate signs
		sec.server.NextProtos = append([]string{state.SealsALPN}, sec.server.NextProtos...)
	}
	return sec, nil
}

// gossipIdentity is the board's certificate and key as the cluster signs
// gossip with them (invariant 11); nil when cert has no usable key. With
// a version 2 bundle every board holds the CA key and issues its own
// certificate, so signing stops replays but not a board minting another's
// name: that takes board bundles (`ews cluster migrate`).
func gossipIdentity(cert tls.Certificate, ca *clustertls.CA) *state.Identity {
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	key, ok := cert.PrivateKey.(crypto.Signer)
	if leaf == nil || !ok || ca == nil {
		return nil
	}
	return &state.Identity{Cert: leaf, Key: key, Roots: ca.Pool}
}

// peerName names the cluster board that sent r, from its verified client
// certificate.
func peerName(r *http.Request) (string, bool) { return clustertls.PeerName(r.TLS) }
