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

// askGap is the least time between two questions to one board after an
// answer, askRetry after none (its HTTPS may not listen yet: a board joins
// the gossip before it serves); askTimeout bounds one; after askFailures
// questions without an answer in a row, its refusals are logged loudly.
const (
	askGap      = 5 * time.Second
	askRetry    = 500 * time.Millisecond
	askTimeout  = 3 * time.Second
	askFailures = 3
)

// ask is what a board asked whether it seals last answered.
type ask struct {
	at       time.Time
	seals    bool // it answered that it seals
	answered bool // it answered (else: no answer, failures in a row)
	failures int
}

// loud reports whether an unsigned message of name, refused, is a sign of
// someone using its name (it says it seals, or it has not answered
// askFailures times) rather than of a rollback being asked about.
func (c *Cluster) askedLoud(name string) bool {
	c.seal.mu.Lock()
	defer c.seal.mu.Unlock()
	a := c.seal.asks[name]
	return a.answered && a.seals || !a.answered && a.failures >= askFailures
}

// askSeals asks board name at its HTTPS address addr whether it seals its
// gossip: a TLS handshake offering SealsALPN and http/1.1, the server's
// certificate checked against roots (ServerAuth) and named name. true: it
// chose SealsALPN; false: http/1.1 (a build before version 5). An error
// (no answer, a certificate of another board or cluster) says nothing.
// Only the board's own certificate key can complete the handshake, so a
// board holding the cluster key cannot answer for it. The certificate is
// judged at now, cluster time (docs/DESIGN.md, Time).
func askSeals(ctx context.Context, roots *x509.CertPool, name, addr string, now time.Time) (bool, error) {
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
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
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

// askReq is a board to ask, and where its HTTPS may be when the table has
// no report of it yet: the HTTP of the unsigned report that made the
// question (its certificate is checked, so a wrong address answers nothing).
type askReq struct{ name, hint string }

// askSealing queues a question to board name whose unsigned message came
// (it was seen sealing, or it is not known yet whether it seals: askLoop);
// it never blocks.
func (c *Cluster) askSealing(name, hint string) {
	if c.seal.gkey == nil {
		return
	}
	select {
	case c.seal.askOut <- askReq{name, hint}:
	default:
	}
}

// askLoop asks the queued boards, one at a time, at most once per askGap
// each, whether they seal; a board whose own certificate says it does not
// (it was rolled back to a build before version 5) has its unsigned
// messages taken again, until its next sealed one (GossipKeys.Forget).
func (c *Cluster) askLoop(ctx context.Context) {
	for {
		var req askReq
		select {
		case <-ctx.Done():
			return
		case req = <-c.seal.askOut:
		}
		name := req.name
		c.seal.mu.Lock()
		prev := c.seal.asks[name]
		c.seal.mu.Unlock()
		gap := askGap
		if !prev.answered {
			gap = askRetry
		}
		if !prev.at.IsZero() && time.Since(prev.at) < gap {
			continue
		}
		c.mu.Lock()
		r, _, _ := c.e.Report(name)
		askFn := c.seal.askSeals
		c.mu.Unlock()
		if r.HTTP == "" {
			r.HTTP = req.hint
		}
		if r.HTTP == "" {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		seals, err := askFn(actx, name, r.HTTP)
		cancel()
		next := ask{at: time.Now(), seals: seals, answered: err == nil}
		if err != nil {
			next.failures = prev.failures + 1
		}
		c.seal.mu.Lock()
		c.seal.asks[name] = next
		c.seal.mu.Unlock()
		switch {
		case err != nil:
			c.logger.Debug("cluster: could not ask a board whether it seals", "name", name, "err", err)
		case seals:
			c.logger.Debug("cluster: the board seals: its unsigned messages stay refused", "name", name)
		case !c.seal.keys.Forget(name):
			c.logger.Info("cluster: the board runs a build that does not seal its gossip (its certificate says so over HTTPS): its unsigned messages are taken until it seals", "name", name)
		default:
			c.logger.Warn("cluster: the board runs a build that does not seal its gossip (its certificate says so over HTTPS: rolled back?): its unsigned messages are taken again until it seals", "name", name, "http", r.HTTP)
		}
	}
}
