package clustertls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

func scopedCA(t *testing.T) *CA {
	t.Helper()
	return parsedCA(t)(NewScopedCA(time.Now(), Scope{Boards: []string{"ews1", "ews2"}, DNS: []string{"ews.local"}, Nets: []*net.IPNet{HostNet("10.0.0.11")}}))
}

// forge signs a leaf for dns/ip with the CA's key, as whoever stole it
// would: no check of ours stands in the way, only the CA's constraints.
func forge(t *testing.T, ca *CA, dns string, ip net.IP) *x509.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: dns},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if dns != "" {
		tmpl.DNSNames = []string{dns}
	}
	if ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// H1: the CA carries critical Name Constraints, so even its own key cannot
// make a certificate a browser trusting it would accept for another site.
func TestScopedCANameConstraints(t *testing.T) {
	ca := scopedCA(t)
	nameConstraints := asn1.ObjectIdentifier{2, 5, 29, 30}
	found := false
	for _, e := range ca.Cert.Extensions {
		if e.Id.Equal(nameConstraints) {
			found = true
			if !e.Critical {
				t.Fatal("the Name Constraints extension is not critical")
			}
		}
	}
	if !found || !ca.Constrained() {
		t.Fatal("the CA has no Name Constraints")
	}
	if life := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore); life > ScopedCAValidity+ClockSkew {
		t.Fatalf("CA valid %v", life)
	}
	cases := []struct {
		dns  string
		ip   net.IP
		want bool
	}{
		{"example.com", nil, false},
		{"www.google.com", nil, false},
		{"ews3", nil, false},
		{"ews3.local", nil, false},
		{"", net.ParseIP("192.168.1.1"), false},
		{"", net.ParseIP("10.0.0.12"), false},
		{"ews1", nil, true},
		{"ews2.local", nil, true},
		{"ews.local", nil, true},
		{"localhost", nil, true},
		{"", net.ParseIP("10.0.0.11"), true},
		{"", net.ParseIP("127.0.0.1"), true},
	}
	for _, c := range cases {
		leaf := forge(t, ca, c.dns, c.ip)
		_, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool})
		if (err == nil) != c.want {
			t.Errorf("leaf for %q %v: verify err %v, want accepted=%v", c.dns, c.ip, err, c.want)
		}
	}
}

func TestIssueBoardRefusesOutOfScope(t *testing.T) {
	ca := scopedCA(t)
	now := time.Now()
	if _, _, err := ca.IssueBoard("ews9", nil, now); err == nil || !strings.Contains(err.Error(), `"ews9" is outside`) {
		t.Fatalf("ews9: %v", err)
	}
	if _, _, err := ca.IssueBoard("ews1", []string{"example.com"}, now); err == nil || !strings.Contains(err.Error(), "example.com") {
		t.Fatalf("example.com SAN: %v", err)
	}
	cert, key, err := ca.IssueBoard("ews1", []string{"10.0.0.11"}, now)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := ca.Board(cert, key, "ews1", now)
	if err != nil {
		t.Fatal(err)
	}
	if !tc.Leaf.NotAfter.Equal(ca.Cert.NotAfter) || tc.Leaf.NotBefore.After(now.Add(-ClockSkew+time.Minute)) {
		t.Errorf("validity %v..%v", tc.Leaf.NotBefore, tc.Leaf.NotAfter)
	}
	for _, c := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"ews2", now, `board "ews1"'s, not "ews2"'s`},
		{"ews1", now.Add(-2 * ClockSkew), "not valid before"},
		{"ews1", ca.Cert.NotAfter.Add(time.Hour), "expired"},
	} {
		if _, err := ca.Board(cert, key, c.name, c.at); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s at %v: %v, want %q", c.name, c.at, err, c.want)
		}
	}
	if _, err := scopedCA(t).Board(cert, key, "ews1", now); err == nil || !strings.Contains(err.Error(), "not a certificate of this cluster's CA") {
		t.Errorf("another cluster's CA: %v", err)
	}
}

// A CA scoped to a DNS suffix certifies a board named after its start as
// NAME.SUFFIX: its bare name and NAME.local are left out, not refused; a
// board with no name inside is still refused.
func TestIssueBoardUnderASuffix(t *testing.T) {
	certDER, keyDER, err := NewScopedCA(time.Now(), Scope{Boards: []string{"ews1"}, DNS: []string{"ews.home.arpa"}})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(certDER, keyDER)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		hosts   []string
		wantDNS []string // nil: refused
	}{
		{"ews4", []string{"ews4.ews.home.arpa"}, []string{"ews4.ews.home.arpa", "localhost"}},
		{"ews1", []string{"ews1.ews.home.arpa"}, []string{"ews1", "ews1.local", "ews1.ews.home.arpa", "localhost"}},
		{"ews4", nil, nil},
		{"ews4", []string{"ews4.example.com"}, nil},
		{"ews4", []string{"ews4.ews.home.arpa", "ews4.example.com"}, nil},
	} {
		der, _, err := ca.IssueBoard(c.name, c.hosts, time.Now())
		if c.wantDNS == nil {
			if err == nil || !strings.Contains(err.Error(), "outside the CA's name constraints") {
				t.Errorf("%s %v: %v, want refused", c.name, c.hosts, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", c.name, c.hosts, err)
			continue
		}
		leaf, _ := x509.ParseCertificate(der)
		if strings.Join(leaf.DNSNames, " ") != strings.Join(c.wantDNS, " ") {
			t.Errorf("%s %v: SANs %v, want %v", c.name, c.hosts, leaf.DNSNames, c.wantDNS)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, DNSName: c.hosts[0]}); err != nil {
			t.Errorf("%s %v: %v", c.name, c.hosts, err)
		}
	}
}
