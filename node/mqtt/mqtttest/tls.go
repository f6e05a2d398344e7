package mqtttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSBroker is a mosquitto with a plain listener (for a Recorder) and two
// TLS listeners, made by BrokerTLS.
type TLSBroker struct {
	Plain string // tcp://127.0.0.1:PORT
	TLS   string // mqtts://127.0.0.1:PORT: the server's certificate only
	MTLS  string // mqtts://127.0.0.1:PORT: a client certificate of CA is required

	CAFile            string // the CA of the broker's (and the client's) certificate
	CertFile, KeyFile string // a client certificate of CA, for MTLS
	OtherCAFile       string // a CA that signed nothing here
}

// BrokerTLS generates a CA, a server certificate for 127.0.0.1 and a
// client certificate, and starts mosquitto with them; the test stops it.
func BrokerTLS(t testing.TB) *TLSBroker {
	t.Helper()
	mosquitto(t)
	dir := t.TempDir()
	b := &TLSBroker{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "client.pem"),
		KeyFile: filepath.Join(dir, "client.key"), OtherCAFile: filepath.Join(dir, "other-ca.pem")}
	ca, caKey := newCA(t, "mqtttest CA", b.CAFile)
	newCA(t, "mqtttest other CA", b.OtherCAFile)
	serverCert, serverKey := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	leaf(t, ca, caKey, &x509.Certificate{Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, serverCert, serverKey)
	leaf(t, ca, caKey, &x509.Certificate{Subject: pkix.Name{CommonName: "ews-test-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, b.CertFile, b.KeyFile)

	plain, tls1, tls2 := freePort(t), freePort(t), freePort(t)
	tlsOpts := fmt.Sprintf("cafile %s\ncertfile %s\nkeyfile %s\n", b.CAFile, serverCert, serverKey)
	start(t, fmt.Sprintf("listener %d 127.0.0.1\nlistener %d 127.0.0.1\n%slistener %d 127.0.0.1\n%srequire_certificate true\n",
		plain, tls1, tlsOpts, tls2, tlsOpts), plain, tls1, tls2)
	b.Plain = fmt.Sprintf("tcp://127.0.0.1:%d", plain)
	b.TLS = fmt.Sprintf("mqtts://127.0.0.1:%d", tls1)
	b.MTLS = fmt.Sprintf("mqtts://127.0.0.1:%d", tls2)
	return b
}

func newCA(t testing.TB, name, file string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	return issue(t, tmpl, nil, nil, file, "")
}

func leaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, certFile, keyFile string) {
	t.Helper()
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	issue(t, tmpl, ca, caKey, certFile, keyFile)
}

// issue signs tmpl with parent (itself when nil) and writes the
// certificate, and the key when keyFile is set.
func issue(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if keyFile != "" {
		kd, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
