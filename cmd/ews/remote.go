package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// boardURL is a board's address as a command's --url takes it ("ews1:8080",
// "https://ews1:8443/"): with a scheme (http:// when none) and no trailing
// slash.
func boardURL(url string) string {
	base := strings.TrimRight(url, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base
}

// readCA reads a --cacert file: the cluster CA's PEM certificate(s).
func readCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	pool := x509.NewCertPool()
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--cacert %s: want a PEM certificate file (ews cluster ca BUNDLE > ca.pem): %v", path, err)
	}
	return pool, nil
}
