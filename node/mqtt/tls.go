package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// TLSFiles are the files of an mqtts:// connection; all optional.
type TLSFiles struct {
	CAFile   string // PEM certificates the broker's must chain to; "": the cluster CA, else the system's roots
	CertFile string // this client's certificate (PEM), with KeyFile
	KeyFile  string
}

// FileError is a TLS file that cannot be used; Key is its [mqtt] key.
type FileError struct {
	Key, Path string
	Err       error
}

func (e *FileError) Error() string { return fmt.Sprintf("mqtt: %s %s: %v", e.Key, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// Secure reports whether broker (as config's BrokerURL gives it) is
// spoken over TLS.
func Secure(broker string) bool {
	u, err := url.Parse(broker)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "mqtts", "ssl", "tls", "tcps", "mqtt+ssl":
		return true
	}
	return false
}

// ClientTLS is the TLS config of a connection to the broker: the broker's
// certificate must chain to f.CAFile's certificates, else to cluster's
// roots (the cluster CA, when this board has TLS on), else to the
// system's; with f.CertFile this client presents that certificate.
func ClientTLS(f TLSFiles, cluster *tls.Config) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case f.CAFile != "":
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, &FileError{"ca_file", f.CAFile, err}
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &FileError{"ca_file", f.CAFile, fmt.Errorf("no PEM certificate in it")}
		}
	case cluster != nil && cluster.RootCAs != nil:
		c.RootCAs = cluster.RootCAs
	}
	if f.CertFile != "" || f.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, &FileError{"cert_file", f.CertFile, err}
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// roots names where the broker's certificate must chain to, for errors.
func (b *Bridge) roots() string {
	switch {
	case b.o.CAFile != "":
		return "mqtt.ca_file " + b.o.CAFile
	case b.o.TLS != nil && b.o.TLS.RootCAs != nil:
		return "the cluster CA"
	}
	return "the system's CA certificates"
}

// dial opens the broker connection (paho's OpenConnectionFunc), over TLS
// for a secure broker, and logs why it failed, once per different reason.
func (b *Bridge) dial(u *url.URL, _ paho.ClientOptions) (net.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	var conn net.Conn
	var err error
	if Secure(u.String()) {
		c := b.o.TLS
		if c == nil {
			c = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		c = c.Clone()
		if c.ServerName == "" {
			c.ServerName = u.Hostname()
		}
		conn, err = tls.DialWithDialer(d, "tcp", u.Host, c)
		if err != nil {
			err = fmt.Errorf("mqtt: TLS to %s (certificate checked against %s): %w", u.Host, b.roots(), err)
		}
	} else {
		conn, err = d.Dial("tcp", u.Host)
		if err != nil {
			err = fmt.Errorf("mqtt: connect to %s: %w", u.Host, err)
		}
	}
	b.noteDial(err)
	return conn, err
}

// noteDial logs a failed connection when its reason changed. (A broker
// that refuses this client's certificate does so after a TLS 1.3
// handshake, so paho sees that refusal, not dial.)
func (b *Bridge) noteDial(err error) {
	b.dialMu.Lock()
	defer b.dialMu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == b.dialErr {
		return
	}
	b.dialErr = msg
	if err != nil {
		b.log.Warn("mqtt: cannot connect to the broker; retrying", "broker", b.o.Broker, "err", err)
	}
}

// plainWarned holds the brokers already warned about, once per process.
var plainWarned sync.Map

// warnPlain logs once per broker that commands and the password cross the
// network in clear when broker is plain TCP to anything but loopback.
func warnPlain(log *slog.Logger, broker string) {
	u, err := url.Parse(broker)
	if err != nil || Secure(broker) || loopback(u.Hostname()) {
		return
	}
	if _, done := plainWarned.LoadOrStore(broker, true); done {
		return
	}
	log.Warn("mqtt: broker is plain TCP over the network: the broker password and every command cross it in clear; use mqtts://", "broker", broker)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
