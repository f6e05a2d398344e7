package clustertls

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// ScopedCAValidity is how long a CA made by NewScopedCA is valid: five
// years. Long enough that a cluster of boards in a cupboard is not broken
// by an expiry nobody remembers (board certificates last as long as the
// CA, so a cluster renews once, with `ews cluster migrate`), short enough
// that a lost admin bundle stops minting trusted certificates in years,
// not decades. Its Name Constraints, not its lifetime, are what keep a
// browser that trusts it safe.
const ScopedCAValidity = 5 * 365 * 24 * time.Hour

// ClockSkew is how far before its minting a board certificate is already
// valid: boards without a real-time clock start with a clock hours off.
const ClockSkew = 24 * time.Hour

// Scope is what a cluster CA may certify (its Name Constraints): the DNS
// names of its boards (each also as NAME.local), extra names the admin
// lists, and IP ranges. localhost and the loopback ranges are always in
// scope (a board's own probes).
type Scope struct {
	Boards []string     // board names: NAME and NAME.local are permitted
	DNS    []string     // further permitted DNS names (and their subdomains)
	Nets   []*net.IPNet // permitted IP ranges (a board address is a /32 or /128)
}

// dns is the permitted DNS constraint list.
func (s Scope) dns() []string {
	var out []string
	add := func(n string) {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, b := range s.Boards {
		add(b)
		add(b + ".local")
	}
	for _, d := range s.DNS {
		add(d)
	}
	add("localhost")
	return out
}

// nets is the permitted IP constraint list.
func (s Scope) nets() []*net.IPNet {
	out := []*net.IPNet{
		{IP: net.IPv4(127, 0, 0, 0).To4(), Mask: net.CIDRMask(8, 32)},
		{IP: net.IPv6loopback, Mask: net.CIDRMask(128, 128)},
	}
	for _, n := range s.Nets {
		if n != nil && !slices.ContainsFunc(out, func(o *net.IPNet) bool { return o.String() == n.String() }) {
			out = append(out, n)
		}
	}
	return out
}

// HostNet is the /32 or /128 of an IP address, for Scope.Nets; nil when
// s is not one.
func HostNet(s string) *net.IPNet {
	ip := net.ParseIP(strings.Trim(s, "[]"))
	if ip == nil {
		return nil
	}
	if v4 := ip.To4(); v4 != nil {
		return &net.IPNet{IP: v4, Mask: net.CIDRMask(32, 32)}
	}
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(128, 128)}
}

// NewScopedCA makes a fresh ECDSA P-256 CA whose critical Name Constraints
// permit only scope: a browser that imports it trusts it for the cluster's
// boards and nothing else. It returns the certificate (DER) and private
// key (PKCS #8 DER).
func NewScopedCA(now time.Time, scope Scope) (certDER, keyDER []byte, err error) {
	return makeCA(func(t *x509.Certificate) {
		t.NotBefore, t.NotAfter = now.Add(-ClockSkew), now.Add(ScopedCAValidity)
		t.PermittedDNSDomainsCritical = true
		t.PermittedDNSDomains, t.PermittedIPRanges = scope.dns(), scope.nets()
	})
}

// Constrained reports whether the CA carries critical Name Constraints.
func (ca *CA) Constrained() bool {
	return ca.Cert.PermittedDNSDomainsCritical && len(ca.Cert.PermittedDNSDomains) > 0
}

// MintedAt is when a certificate IssueBoard made was minted: ClockSkew
// after its start. No true time is earlier: a board whose clock is knows
// its clock is wrong (docs/DESIGN.md, Time).
func MintedAt(leaf *x509.Certificate) time.Time { return leaf.NotBefore.Add(ClockSkew) }

// IssueBoard mints a certificate for board name off the board (the admin
// holds the CA key): SANs are name, name.local, hosts (IP addresses or DNS
// names), localhost and loopback. It is valid from now - ClockSkew until
// the CA expires. A name or host outside the CA's Name Constraints is
// refused here, naming it, rather than minted into a certificate no peer
// would accept; only name and name.local are left out instead when a DNS
// name of hosts is inside (a CA scoped to a suffix: dropAutoOutside). It returns the certificate and its key, both DER.
func (ca *CA) IssueBoard(name string, hosts []string, now time.Time) (certDER, keyDER []byte, err error) {
	if ca.Key == nil {
		return nil, nil, errors.New("clustertls: this CA has no private key: cannot issue certificates")
	}
	if name == "" {
		return nil, nil, errors.New("clustertls: a board certificate needs the board's name")
	}
	tmpl, key, err := leafTemplate(name, append([]string{name + ".local"}, hosts...), now.Add(-ClockSkew), ca.Cert.NotAfter)
	if err != nil {
		return nil, nil, err
	}
	if ca.Cert.PermittedDNSDomainsCritical {
		tmpl.DNSNames = dropAutoOutside(tmpl.DNSNames, name, ca.Cert.PermittedDNSDomains)
		for _, d := range tmpl.DNSNames {
			if !permittedDNS(ca.Cert.PermittedDNSDomains, d) {
				return nil, nil, fmt.Errorf("clustertls: %q is outside the CA's name constraints (permitted: %s); name the board or domain at `ews cluster init` (--peers, --board, --dns)", d, strings.Join(ca.Cert.PermittedDNSDomains, " "))
			}
		}
		for _, ip := range tmpl.IPAddresses {
			if !slices.ContainsFunc(ca.Cert.PermittedIPRanges, func(n *net.IPNet) bool { return n.Contains(ip) }) {
				return nil, nil, fmt.Errorf("clustertls: address %s is outside the CA's name constraints; give it at `ews cluster init` (--peers or --net)", ip)
			}
		}
	}
	return signed(tmpl, ca.Cert, key, ca.Key)
}

// dropAutoOutside leaves out the names IssueBoard adds by itself (name and
// name.local) when they are outside the constraints but another DNS name
// of the certificate is inside: a CA scoped to a DNS suffix certifies a
// board named later as NAME.SUFFIX (`--addr`), not as NAME. With no name
// inside, dns is unchanged and the caller refuses the first outside.
func dropAutoOutside(dns []string, name string, constraints []string) []string {
	auto := func(d string) bool { return d == name || d == name+".local" }
	keep := dns[:0:0]
	inside := false
	for _, d := range dns {
		ok := permittedDNS(constraints, d)
		if ok && !auto(d) && d != "localhost" {
			inside = true
		}
		if ok || !auto(d) {
			keep = append(keep, d)
		}
	}
	if !inside {
		return dns
	}
	return keep
}

// permittedDNS is x509's rule: name equals a constraint or ends in
// "." + constraint.
func permittedDNS(constraints []string, name string) bool {
	name = strings.ToLower(name)
	for _, c := range constraints {
		c = strings.ToLower(strings.TrimPrefix(c, "."))
		if name == c || strings.HasSuffix(name, "."+c) {
			return true
		}
	}
	return false
}

// Board reads a board's certificate and key (DER) and checks them against
// the CA: the certificate chains to it (Name Constraints included), names
// board name, is valid at now, and the key is its key. Errors say which.
func (ca *CA) Board(certDER, keyDER []byte, name string, now time.Time) (tls.Certificate, error) {
	leaf, err := x509.ParseCertificate(certDER)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("clustertls: cert: %w", err)
	}
	if leaf.Subject.CommonName != name {
		return tls.Certificate{}, fmt.Errorf("clustertls: cert: the certificate is board %q's, not %q's", leaf.Subject.CommonName, name)
	}
	switch {
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("clustertls: cert: board %q's certificate is not valid before %s (this clock says %s: set the time, NTP or the RTC)", name, leaf.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("clustertls: cert: board %q's certificate expired %s: mint a new one (ews cluster board, or ews cluster migrate when the CA expired)", name, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		return tls.Certificate{}, fmt.Errorf("clustertls: cert: not a certificate of this cluster's CA: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("clustertls: cert_key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	pub, _ := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub == nil || !pub.Equal(&ek.PublicKey) {
		return tls.Certificate{}, errors.New("clustertls: cert_key does not belong to cert")
	}
	return tls.Certificate{Certificate: [][]byte{certDER, ca.Cert.Raw}, PrivateKey: ek, Leaf: leaf}, nil
}
