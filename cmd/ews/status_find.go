package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/config"
)

// candidate is a place `ews status` looks for a board when --url is not given.
type candidate struct {
	url, why string
	// ca is the cluster CA of the local config's bundle
	// (cluster.bundle_file), when it could be read: the board found
	// there is checked against it without --cacert.
	ca *x509.CertPool
}

// statusFallbacks are tried after the config's node.http: the former
// default of --url, then the first boards of `ews demo` (base port 8081).
var statusFallbacks = []candidate{
	{url: "http://127.0.0.1:8080", why: "the default node.http"},
	{url: "http://127.0.0.1:8081", why: "ews demo's ews1"},
	{url: "http://127.0.0.1:8082", why: "ews demo's ews2"},
	{url: "http://127.0.0.1:8083", why: "ews demo's ews3"},
}

// localCandidates lists where a local board may answer: this machine's
// config (--config, $EWS_CONFIG, the search paths) first, then the fallbacks.
func localCandidates(explicit string) []candidate {
	var out []candidate
	if path, err := config.Find(explicit); err == nil {
		if u, err := configHTTP(path); err == nil {
			out = append(out, candidate{url: u, why: path + " node.http", ca: configCA(path)})
		}
	}
	for _, c := range statusFallbacks {
		if len(out) == 0 || out[0].url != c.url {
			out = append(out, c)
		}
	}
	return out
}

// configHTTP reads node.http of the config at path (only that key: the rest,
// secrets included, may be unreadable here) as a URL on this machine.
func configHTTP(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Node struct {
			HTTP string `toml:"http"`
		} `toml:"node"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	addr := doc.Node.HTTP
	if addr == "" {
		addr = ":8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// configCA is the CA of the bundle the config at path names
// (cluster.bundle_file); nil when there is none or it cannot be read here
// (a board's bundle is 0600: root's, or ews's).
func configCA(path string) *x509.CertPool {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		Cluster struct {
			BundleFile string `toml:"bundle_file"`
		} `toml:"cluster"`
	}
	if toml.Unmarshal(data, &doc) != nil || doc.Cluster.BundleFile == "" {
		return nil
	}
	b, err := bundle.Read(doc.Cluster.BundleFile)
	if err != nil {
		return nil
	}
	ca, err := b.CA()
	if err != nil || ca == nil {
		return nil
	}
	return ca.Pool
}

// findBoard returns the first candidate whose /api/cluster answers 200.
func findBoard(cands []candidate) (candidate, bool) {
	// The probe only asks whether a board answers and sends no credential:
	// a TLS board found over mDNS is verified (--cacert) by the real request.
	c := &http.Client{Timeout: 700 * time.Millisecond,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // probe only, see above
	for _, cand := range cands {
		resp, err := c.Get(cand.url + "/api/cluster")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return cand, true
		}
	}
	return candidate{}, false
}

// describe lists candidates for the "no board found" message.
func describe(cands []candidate) string {
	parts := make([]string, len(cands))
	for i, c := range cands {
		parts[i] = fmt.Sprintf("%s (%s)", c.url, c.why)
	}
	return strings.Join(parts, ", ")
}
