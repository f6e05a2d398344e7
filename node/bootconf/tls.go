package bootconf

import (
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"log/slog"

	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/state"
	"os"
)

// TLS is what this board holds from the cluster bundle: the TLS configs
// made from its CA (nil: TLS off) and the session secret.
type TLS struct {
	CA      *clustertls.CA
	Cert    tls.Certificate
	Server  *tls.Config       // the HTTPS listener: asks peers for their certificate
	Client  *tls.Config       // requests to peers: trusts the CA, presents cert
	Session []byte            // keys session cookies
	Verify  ed25519.PublicKey // firmware signing key's public half; nil: no firmware accepted
	Handoff bool              // Session is this process's own random key (HandoffEnv)
	// Identity signs this board's gossip (state.Config.Identity): its
	// certificate from the cluster CA and its key; nil without one.
	Identity *state.Identity
}

// On reports whether this board serves and speaks HTTPS.
func (s *TLS) On() bool { return s.Server != nil }

// Scheme is the scheme of URLs to other boards.
func (s *TLS) Scheme() string {
	if s.On() {
		return "https"
	}
	return "http"
}

// OpenTLS reads the bundle (cluster.bundle_file) and, with TLS on,
// issues this board's certificate from the CA: its name and every host
// the board is known by. The session secret is the bundle's, else derived
// from the cluster key (random, per cluster, never sent over HTTP), else
// none: then auth makes a per-process one and sessions hold on this board
// only.
func (b *Boot) OpenTLS(log *slog.Logger) (TLS, error) {
	var sec TLS
	s := b.Security
	for _, note := range s.Notes {
		log.Warn(note)
	}
	if s.Bundle != nil {
		sec.Session = s.Bundle.Session()
	}
	sec.Verify = s.Verify
	if sec.Session == nil {
		if k := b.ClusterKey; len(k) > 0 {
			sec.Session = k
		}
	}
	if len(b.Rotated.Key) > 0 { // the card's, or a rotation's kept under state_dir (node/bootconf)
		primary, _ := b.Rotated.Keys()
		sec.Session = primary.Session
	}
	if sec.Session == nil {
		// No bundle and no cluster key (a standalone board): a random key of
		// this process, handed to the process that replaces it on a restart
		// or firmware upgrade (HandoffEnv), so logins survive those.
		k, err := sessionFromEnv()
		if err != nil {
			return sec, err
		}
		sec.Session, sec.Handoff = k, true
	}
	if s.Minted && s.CA != nil { // a board bundle: its certificate, with TLS on or off
		sec.Identity = gossipIdentity(s.Cert, s.CA)
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
	sec.CA, sec.Cert = s.CA, cert
	sec.Server, sec.Client = s.CA.ServerConfig(cert), s.CA.ClientConfig(cert)
	sec.Server.Time, sec.Client.Time = b.Clock.Now, b.Clock.Now // peers' certificates in cluster time (docs/DESIGN.md, Time)
	sec.Identity = gossipIdentity(cert, s.CA)
	if sec.Identity != nil {
		// a peer that saw this board seal and then hears it unsealed asks
		// here whether it was rolled back (invariant 11): this build
		// seals, and says so in the handshake its certificate signs
		sec.Server.NextProtos = append([]string{state.SealsALPN}, sec.Server.NextProtos...)
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

// EnvSessionSecret carries a standalone board's random session key to the
// process that replaces it on a restart or upgrade (exec in place, or the
// upgrade supervisor's child). It is read once at start and removed from
// the environment, so no CGI program, health check or helper inherits it.
const EnvSessionSecret = "EWS_SESSION_SECRET"

// sessionFromEnv takes the key a previous process of this board handed
// over, or makes a new random one.
func sessionFromEnv() ([]byte, error) {
	if v := os.Getenv(EnvSessionSecret); v != "" {
		_ = os.Unsetenv(EnvSessionSecret)
		k, err := hex.DecodeString(v)
		if err == nil && len(k) == 32 {
			return k, nil
		}
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("bootconf: session key: %w", err)
	}
	return k, nil
}

// HandoffEnv is the environment entry ("EWS_SESSION_SECRET=...") that
// keeps this board's sessions valid across a restart it starts itself; ""
// when its session key comes from the bundle or the cluster key.
func (s *TLS) HandoffEnv() string {
	if !s.Handoff {
		return ""
	}
	return EnvSessionSecret + "=" + hex.EncodeToString(s.Session)
}
