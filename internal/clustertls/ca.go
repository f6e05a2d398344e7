// Package clustertls makes and checks the cluster's TLS material: the per-cluster CA, each board's certificate and the tls.Configs built from them.
package clustertls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// CAValidity is how long a CA made by NewCA is valid. Board certificates
// share the CA's window (see Issue), so a board whose clock is off by days
// (a Raspberry Pi without a real-time clock) still accepts its peers.
const CAValidity = 20 * 365 * 24 * time.Hour

// CA is the cluster's certificate authority: the certificate every board
// and client trusts and, on boards, the key that issues board certificates.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey // nil: can verify, cannot issue
	Pool *x509.CertPool    // just Cert
	PEM  []byte            // Cert, PEM encoded (what a client installs)
}

// NewCA makes a fresh ECDSA P-256 CA and returns its certificate (DER)
// and private key (PKCS #8 DER).
func NewCA(now time.Time) (certDER, keyDER []byte, err error) {
	return makeCA(func(t *x509.Certificate) {
		t.NotBefore, t.NotAfter = now.Add(-24*time.Hour), now.Add(CAValidity)
	})
}

// makeCA makes a self-signed ECDSA P-256 CA certificate, its template
// completed by set (validity, constraints), and returns it (DER) with its
// private key (PKCS #8 DER).
func makeCA(set func(*x509.Certificate)) (certDER, keyDER []byte, err error) {
	key, serial, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "ews cluster CA", Organization: []string{"ews"}},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	set(tmpl)
	return signed(tmpl, tmpl, key, key)
}

// signed is tmpl, holding key's public half, signed by parent's key
// signer (DER), with key (PKCS #8 DER): makeCA's and IssueBoard's ending.
func signed(tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) (certDER, keyDER []byte, err error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("clustertls: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("clustertls: %w", err)
	}
	return der, kder, nil
}

// ParseCA reads a CA certificate (DER) and, unless keyDER is empty, its
// private key (PKCS #8 DER); the key must match the certificate. Errors
// name the field: ca_cert or ca_key.
func ParseCA(certDER, keyDER []byte) (*CA, error) {
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("clustertls: ca_cert: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("clustertls: ca_cert: not a CA certificate")
	}
	ca := &CA{Cert: cert, Pool: x509.NewCertPool(), PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})}
	ca.Pool.AddCert(cert)
	if len(keyDER) == 0 {
		return ca, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("clustertls: ca_key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("clustertls: ca_key: want an ECDSA key")
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&ek.PublicKey) {
		return nil, errors.New("clustertls: ca_key does not belong to ca_cert")
	}
	ca.Key = ek
	return ca, nil
}

// newKey is a fresh ECDSA P-256 key and a serial for its certificate.
func newKey() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("clustertls: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	return key, serial, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("clustertls: %w", err)
	}
	return n, nil
}
