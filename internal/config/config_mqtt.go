package config

import (
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
	Broker       string `toml:"broker"`        // "tcp://host:port" or "host:port" (default port 1883)
	User         string `toml:"user"`          // "" = anonymous
	PasswordFile string `toml:"password_file"` // file holding the broker password
	Prefix       string `toml:"prefix"`        // topic prefix and client id; default "ews"
	Discovery    bool   `toml:"discovery"`     // publish Home Assistant discovery configs under discovery_prefix
	// DiscoveryPrefix is Home Assistant's discovery prefix; default "homeassistant".
	DiscoveryPrefix string `toml:"discovery_prefix"`
}

var topicWordRe = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,64}$`)

// BrokerURL returns the broker as a URL paho accepts: tcp://host:port.
func (m *MQTT) BrokerURL() (string, error) {
	b := strings.TrimSpace(m.Broker)
	if b == "" {
		return "", fmt.Errorf("empty broker: want \"tcp://host:1883\" or \"host:1883\"")
	}
	if !strings.Contains(b, "://") {
		b = "tcp://" + b
	}
	u, err := url.Parse(b)
	if err != nil {
		return "", fmt.Errorf("%q is not a broker address: %v", m.Broker, err)
	}
	switch u.Scheme {
	case "tcp", "mqtt":
	default:
		return "", fmt.Errorf("%q: scheme %q not supported, want tcp://host:port", m.Broker, u.Scheme)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("%q has no host", m.Broker)
	}
	if port == "" {
		port = "1883"
	}
	return "tcp://" + net.JoinHostPort(host, port), nil
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
	if m.PasswordFile != "" && m.User == "" {
		bad("mqtt.password_file", "a password needs mqtt.user")
	}
	if c.HTTP.Auth == "basic" {
		bad("mqtt", "MQTT commands run with the cluster's token: it needs http.auth = \"token\" or \"none\", not basic")
	}
}

// checkMQTTSecret reads mqtt.password_file as `ews run` does.
func (c *Config) checkMQTTSecret(errs, warns Errors) (Errors, Errors) {
	if c.MQTT == nil || c.MQTT.PasswordFile == "" {
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
