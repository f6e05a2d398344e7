package config

import (
	"crypto/ed25519"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// Security is what the cluster bundle gives this board: the session
// secret and, when TLS is on, the CA.
type Security struct {
	Bundle *bundle.Bundle // nil: no cluster.bundle_file
	CA     *clustertls.CA // nil: TLS off
	// Cert is this board's own certificate from a board bundle (Minted);
	// else, with a version 2 bundle, the board issues one from CA.
	Cert   tls.Certificate
	Minted bool
	// Verify is the key firmware must be signed with; nil: the bundle has
	// none (older than version 3, or no bundle), and no firmware is accepted.
	Verify ed25519.PublicKey
	TLS    bool     // serve HTTPS on http.https and speak it to peers
	Notes  []string // warnings to log (TLS off and why)
	Hosts  []string // this board's hosts for its certificate's SANs
}

// Security reads cluster.bundle_file and decides whether TLS is on:
// http.tls if set, else on exactly when the bundle carries a CA. Errors
// name the key: a bundle that cannot be read, tls = true without a CA.
func (c *Config) Security() (*Security, error) {
	s := &Security{}
	if c.Cluster.BundleFile != "" {
		b, err := bundle.Read(c.Cluster.BundleFile)
		if err != nil {
			return nil, c.Errorf("cluster.bundle_file", "%v", err)
		}
		if err := b.NeedBoard(c.Cluster.BundleFile); err != nil {
			return nil, c.Errorf("cluster.bundle_file", "%v", err)
		}
		s.Bundle = b
		ca, err := b.CA()
		if err != nil {
			return nil, c.Errorf("cluster.bundle_file", "%s: %v", c.Cluster.BundleFile, err)
		}
		s.CA = ca
		if b.IsBoard() {
			now := c.Now()
			cert, err := b.BoardCert(c.Node.Name, now)
			if err != nil {
				// a clock earlier than the certificate is wrong, not the
				// certificate: checked at its start, the board takes cluster
				// time from its peers (docs/DESIGN.md, Time)
				if at, err2 := b.BoardCert(c.Node.Name, time.Time{}); err2 == nil && at.Leaf != nil && now.Before(at.Leaf.NotBefore) {
					cert, err = at, nil
					s.Notes = append(s.Notes, fmt.Sprintf("this board's clock (%s) is earlier than its certificate's validity (from %s): the clock is wrong; the board takes cluster time from its peers (docs/guide/time.md)",
						now.UTC().Format(time.RFC3339), at.Leaf.NotBefore.UTC().Format(time.RFC3339)))
				}
			}
			if err != nil {
				return nil, c.Errorf("cluster.bundle_file", "%s: %v", c.Cluster.BundleFile, err)
			}
			s.Cert, s.Minted = cert, true
			s.Verify, _ = b.Verifier() // Validate checked it
		} else if ca != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s is a version %d bundle: it holds the CA key, so this board's disk can sign certificates for any site, and it holds no firmware verify key, so this board accepts no firmware upgrade; migrate: ews cluster migrate (docs/guide/security.md)", c.Cluster.BundleFile, b.Version))
		}
	}
	want := s.CA != nil
	if c.HTTP.TLS != nil {
		want = *c.HTTP.TLS
	}
	switch {
	case want && s.CA == nil && s.Bundle == nil:
		return nil, c.Errorf("http.tls", "tls = true needs the cluster's CA: set cluster.bundle_file to a bundle made by ews cluster init")
	case want && s.CA == nil:
		return nil, c.Errorf("http.tls", "tls = true, but %s is a version %d bundle without a CA: make a new one with ews cluster init", c.Cluster.BundleFile, s.Bundle.Version)
	case !want && s.Bundle != nil && s.CA == nil:
		s.Notes = append(s.Notes, fmt.Sprintf("TLS is off: %s is a version %d bundle without a CA, so tokens, cookies and dispatch marks cross the network in clear; make a new bundle with ews cluster init", c.Cluster.BundleFile, s.Bundle.Version))
	case !want && s.CA != nil:
		s.Notes = append(s.Notes, "http.tls = false: tokens, cookies and dispatch marks cross the network in clear")
	case !want && !c.Standalone():
		s.Notes = append(s.Notes, "TLS is off (no cluster.bundle_file): tokens, cookies and dispatch marks cross the network in clear")
	}
	s.TLS = want
	if want {
		s.Hosts = c.certHosts()
	}
	return s, nil
}

// certHosts are the hosts other boards and clients may use for this board.
func (c *Config) certHosts() []string {
	hosts := []string{c.Node.Advertise, hostOf(c.Node.Gossip), hostOf(c.Node.HTTP), hostOf(c.HTTP.HTTPS)}
	if peers, err := c.Peers(); err == nil {
		for _, p := range peers {
			if p.Name == c.Node.Name {
				hosts = append(hosts, hostOf(p.Addr))
			}
		}
	}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	return hosts
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

func (c *Config) validateTLS(bad func(string, string, ...any)) {
	if c.HTTP.TLS != nil && !*c.HTTP.TLS {
		return
	}
	if _, _, err := net.SplitHostPort(c.HTTP.HTTPS); err != nil {
		bad("http.https", "%q is not host:port: %v", c.HTTP.HTTPS, err)
	} else if hostOf(c.HTTP.HTTPS) == hostOf(c.Node.HTTP) && portOf(c.HTTP.HTTPS) == portOf(c.Node.HTTP) && portOf(c.HTTP.HTTPS) != "0" {
		bad("http.https", "%q is node.http's address too: give HTTPS its own port", c.HTTP.HTTPS)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
