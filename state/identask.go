package state

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// SealsALPN is the TLS application protocol a board that seals its gossip
// offers first on its HTTPS listener (node sets it with an identity). A
// board asking another whether it seals offers it and http/1.1: a build
// before version 5 picks http/1.1, and the handshake, under the asked
// board's certificate, says which the board's running build chose.
const SealsALPN = "ews-gossip-5"

// askGap is the least time between two questions to one board; askTimeout
// bounds one.
const (
	askGap     = 5 * time.Second
	askTimeout = 3 * time.Second
)

// askSeals asks board name at its HTTPS address addr whether it seals its
// gossip: a TLS handshake offering SealsALPN and http/1.1, the server's
// certificate checked against roots (ServerAuth) and named name. true: it
// chose SealsALPN; false: http/1.1 (a build before version 5). An error
// (no answer, a certificate of another board or cluster) says nothing.
// Only the board's own certificate key can complete the handshake, so a
// board holding the cluster key cannot answer for it.
func askSeals(ctx context.Context, roots *x509.CertPool, name, addr string) (bool, error) {
	d := tls.Dialer{Config: &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{SealsALPN, "http/1.1"},
		// verified below: the cluster CA and the board's name (the address
		// may be one the certificate does not list)
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no certificate")
			}
			leaf := cs.PeerCertificates[0]
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return err
			}
			if leaf.Subject.CommonName != name {
				return fmt.Errorf("the certificate is board %q's", leaf.Subject.CommonName)
			}
			return nil
		},
	}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, fmt.Errorf("state: ask %q at %s whether it seals: %w", name, addr, err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().NegotiatedProtocol == SealsALPN, nil
}

// askSealing queues a question to board name, seen sealing, whose unsigned
// message came while it advertises no version 5 (askLoop); it never blocks.
func (c *Cluster) askSealing(name string) {
	if c.gkey == nil {
		return
	}
	select {
	case c.askOut <- name:
	default:
	}
}

// askLoop asks the queued boards, one at a time, at most once per askGap
// each, whether they seal; a board whose own certificate says it does not
// (it was rolled back to a build before version 5) has its unsigned
// messages taken again, until its next sealed one (GossipKeys.Forget).
func (c *Cluster) askLoop(ctx context.Context) {
	defer c.wg.Done()
	last := map[string]time.Time{}
	for {
		var name string
		select {
		case <-ctx.Done():
			return
		case name = <-c.askOut:
		}
		if t, ok := last[name]; ok && time.Since(t) < askGap {
			continue
		}
		last[name] = time.Now()
		c.mu.Lock()
		r, _, _ := c.e.Report(name)
		ask := c.askSeals
		c.mu.Unlock()
		if r.HTTP == "" {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		seals, err := ask(actx, name, r.HTTP)
		cancel()
		switch {
		case err != nil:
			c.logger.Debug("cluster: could not ask a board whether it seals", "name", name, "err", err)
		case seals:
			c.logger.Debug("cluster: the board seals: its unsigned messages stay refused", "name", name)
		case c.keys.Forget(name):
			c.logger.Warn("cluster: the board runs a build that does not seal its gossip (its certificate says so over HTTPS: rolled back?): its unsigned messages are taken again until it seals", "name", name, "http", r.HTTP)
		}
	}
}
