package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// MQTT is the [mqtt] table: the master bridges every device of the cluster
// to an MQTT broker (Home Assistant, Node-RED, openHAB...).
type MQTT struct {
	Broker       string `toml:"broker"`        // "tcp://host:port" or "host:port" (default port 1883); "mqtts://host:port" or "ssl://" over TLS (default port 8883)
	User         string `toml:"user"`          // "" = anonymous
	PasswordFile string `toml:"password_file"` // file holding the broker password
	Prefix       string `toml:"prefix"`        // topic prefix and client id; default "ews"
	Discovery    bool   `toml:"discovery"`     // publish Home Assistant discovery configs under discovery_prefix
	// DiscoveryPrefix is Home Assistant's discovery prefix; default "homeassistant".
	DiscoveryPrefix string `toml:"discovery_prefix"`
	// Over TLS (mqtts://): the broker's certificate must chain to CAFile's
	// certificates; unset, to the cluster CA when TLS is on, else to the
	// system's. CertFile and KeyFile: a client certificate to present.
	CAFile   string `toml:"ca_file"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

var topicWordRe = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,64}$`)

// BrokerURL returns the broker as a URL paho accepts: tcp://host:port, or
// mqtts://host:port over TLS.
func (m *MQTT) BrokerURL() (string, error) {
	b := strings.TrimSpace(m.Broker)
	if b == "" {
		return "", fmt.Errorf("empty broker: want \"tcp://host:1883\", \"mqtts://host:8883\" or \"host:1883\"")
	}
	if !strings.Contains(b, "://") {
		b = "tcp://" + b
	}
	u, err := url.Parse(b)
	if err != nil {
		return "", fmt.Errorf("%q is not a broker address: %v", m.Broker, err)
	}
	scheme, port := "tcp", "1883"
	switch u.Scheme {
	case "tcp", "mqtt":
	case "mqtts", "ssl", "tls":
		scheme, port = "mqtts", "8883"
	default:
		return "", fmt.Errorf("%q: scheme %q not supported, want tcp://host:port or mqtts://host:port", m.Broker, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("%q has no host", m.Broker)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// Secure reports whether the broker is spoken to over TLS.
func (m *MQTT) Secure() bool {
	u, err := m.BrokerURL()
	return err == nil && strings.HasPrefix(u, "mqtts://")
}

// Password reads password_file ("" when none is set).
func (m *MQTT) Password() (string, error) {
	if m.PasswordFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(m.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("config: mqtt password_file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (c *Config) fillMQTT() {
	if c.MQTT == nil {
		return
	}
	if c.MQTT.Prefix == "" {
		c.MQTT.Prefix = "ews"
	}
	if c.MQTT.DiscoveryPrefix == "" {
		c.MQTT.DiscoveryPrefix = "homeassistant"
	}
}

func (c *Config) validateMQTT(bad func(string, string, ...any)) {
	m := c.MQTT
	if m == nil {
		return
	}
	if _, err := m.BrokerURL(); err != nil {
		bad("mqtt.broker", "%v", err)
	}
	if !topicWordRe.MatchString(m.Prefix) {
		bad("mqtt.prefix", "%q: want letters, digits, - or _ (it is a topic level and the client id)", m.Prefix)
	}
	if !topicWordRe.MatchString(m.DiscoveryPrefix) {
		bad("mqtt.discovery_prefix", "%q: want letters, digits, - or _", m.DiscoveryPrefix)
	}
	if !m.Secure() {
		for _, kv := range [][2]string{{"mqtt.ca_file", m.CAFile}, {"mqtt.cert_file", m.CertFile}, {"mqtt.key_file", m.KeyFile}} {
			if kv[1] != "" {
				bad(kv[0], "is for a TLS broker: set broker = \"mqtts://host:8883\"")
			}
		}
	}
	if (m.CertFile == "") != (m.KeyFile == "") {
		bad("mqtt.cert_file", "a client certificate needs both cert_file and key_file")
	}
	if m.PasswordFile != "" && m.User == "" {
		bad("mqtt.password_file", "a password needs mqtt.user")
	}
	if c.HTTP.Auth == "basic" {
		bad("mqtt", "MQTT commands run with the cluster's token: it needs http.auth = \"token\" or \"none\", not basic")
	}
}

// checkMQTTSecret reads mqtt.password_file and the TLS files as `ews run` does.
func (c *Config) checkMQTTSecret(errs, warns Errors) (Errors, Errors) {
	if c.MQTT == nil {
		return errs, warns
	}
	errs, warns = c.checkMQTTTLS(errs, warns)
	if c.MQTT.PasswordFile == "" {
		return errs, warns
	}
	p, err := c.MQTT.Password()
	switch {
	case err != nil:
		e := c.Errorf("mqtt.password_file", "cannot read the password: %v", err)
		e.Err = err
		return append(errs, e), warns
	case p == "":
		return append(errs, c.Errorf("mqtt.password_file", "%s is empty: put the broker password in it", c.MQTT.PasswordFile)), warns
	}
	return errs, c.warnReadable(warns, "mqtt.password_file", c.MQTT.PasswordFile)
}

// checkMQTTTLS reads ca_file, cert_file and key_file.
func (c *Config) checkMQTTTLS(errs, warns Errors) (Errors, Errors) {
	m := c.MQTT
	if m.CAFile != "" {
		pem, err := os.ReadFile(m.CAFile)
		switch {
		case err != nil:
			e := c.Errorf("mqtt.ca_file", "cannot read the CA: %v", err)
			e.Err = err
			errs = append(errs, e)
		case !x509.NewCertPool().AppendCertsFromPEM(pem):
			errs = append(errs, c.Errorf("mqtt.ca_file", "%s holds no PEM certificate", m.CAFile))
		}
	}
	if m.CertFile != "" && m.KeyFile != "" {
		if _, err := tls.LoadX509KeyPair(m.CertFile, m.KeyFile); err != nil {
			e := c.Errorf("mqtt.cert_file", "cannot load the client certificate: %v", err)
			e.Err = err
			errs = append(errs, e)
		} else {
			warns = c.warnReadable(warns, "mqtt.key_file", m.KeyFile)
		}
	}
	return errs, warns
}
