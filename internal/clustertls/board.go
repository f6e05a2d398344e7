package clustertls

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// Issue makes a certificate for board name, signed by the CA: CommonName
// and the first DNS name are the board's name; hosts (IP addresses or DNS
// names: its advertised, gossip and listen hosts) are added as SANs, and
// so are localhost and the loopback addresses (the board's own probes).
// It is good for server and client authentication, so one certificate
// serves the board's HTTPS listener and its requests to peers. Its
// validity is the CA's.
func (ca *CA) Issue(name string, hosts []string) (tls.Certificate, error) {
	if ca.Key == nil {
		return tls.Certificate{}, errors.New("clustertls: this CA has no private key: cannot issue certificates")
	}
	if name == "" {
		return tls.Certificate{}, errors.New("clustertls: a board certificate needs the board's name")
	}
	tmpl, key, err := leafTemplate(name, hosts, ca.Cert.NotBefore, ca.Cert.NotAfter)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("clustertls: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("clustertls: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// leafTemplate is a fresh key and the certificate template of board name
// (Issue's and IssueBoard's): CommonName and the first DNS name are name;
// sans (IP addresses or DNS names) and localhost and the loopback
// addresses follow, each once, an unspecified address left out; valid
// from notBefore to notAfter, for server and client authentication.
func leafTemplate(name string, sans []string, notBefore, notAfter time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, serial, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"ews"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{name},
	}
	for _, h := range append(slices.Clone(sans), "localhost", "127.0.0.1", "::1") {
		h = strings.Trim(h, "[]")
		switch ip := net.ParseIP(h); {
		case h == "":
		case ip != nil:
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) && !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		case !slices.Contains(tmpl.DNSNames, h):
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl, key, nil
}

// ServerConfig is the board's HTTPS listener: it presents cert and asks
// for a client certificate, verified against the CA when one is given
// (tls.VerifyClientCertIfGiven): browsers and curl without one still reach
// the UI; a board presents its own, which PeerName then reads.
func (ca *CA) ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    ca.Pool,
		NextProtos:   []string{"http/1.1"},
	}
}

// ClientConfig is what a board dials its peers with: it trusts the CA only
// and presents cert.
func (ca *CA) ClientConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		RootCAs:      ca.Pool,
	}
}

// PeerName is the board name of the verified client certificate of a TLS
// connection, and false when the peer presented none that chains to the
// cluster CA (a browser, curl, or plain HTTP: cs nil).
func PeerName(cs *tls.ConnectionState) (string, bool) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", false
	}
	leaf := cs.VerifiedChains[0][0]
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) || leaf.Subject.CommonName == "" {
		return "", false
	}
	return leaf.Subject.CommonName, true
}
