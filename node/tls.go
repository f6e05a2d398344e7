package node

import (
	"crypto/ed25519"
	"crypto/tls"
	"net/http"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/config"
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
func (n *Node) openSecurity() error {
	s, err := n.cfg.Security()
	if err != nil {
		if e, ok := err.(*config.Error); ok {
			return config.Errors{e}
		}
		return err
	}
	for _, note := range s.Notes {
		n.log.Warn(note)
	}
	if s.Bundle != nil {
		n.sec.session = s.Bundle.Session()
	}
	n.sec.verify = s.Verify
	if n.sec.session == nil {
		if k, err := n.cfg.ClusterKey(); err == nil && len(k) > 0 {
			n.sec.session = k
		}
	}
	if n.sec.session == nil {
		// No bundle and no cluster key (a standalone board): a random key of
		// this process, handed to the process that replaces it on a restart
		// or firmware upgrade (SessionHandoff), so logins survive those.
		k, err := sessionFromEnv()
		if err != nil {
			return err
		}
		n.sec.session, n.sec.handoff = k, true
	}
	if !s.TLS {
		return nil
	}
	cert := s.Cert // minted off the board (a board bundle)
	if !s.Minted {
		var err error
		if cert, err = s.CA.Issue(n.cfg.Node.Name, s.Hosts); err != nil { // a version 2 bundle
			return config.Errors{n.cfg.Errorf("cluster.bundle_file", "%v", err)}
		}
	}
	n.sec.ca, n.sec.cert = s.CA, cert
	n.sec.server, n.sec.client = s.CA.ServerConfig(cert), s.CA.ClientConfig(cert)
	return nil
}

// peerName names the cluster board that sent r, from its verified client
// certificate.
func peerName(r *http.Request) (string, bool) { return clustertls.PeerName(r.TLS) }
