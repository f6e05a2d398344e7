package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/mqtt/mqtttest"
	"github.com/ews-firmware/ews/state"
)

func relayCluster() *fakeCluster {
	return &fakeCluster{
		devs:   []hal.Snapshot{{Name: "relay1", Driver: "sim-switch", Node: "ews1", State: hal.StateOff, Value: false}},
		boards: []state.Board{{Name: "ews1", Runstate: state.Running}},
	}
}

// runBridge runs a bridge until the test ends.
func runBridge(t *testing.T, o Options) {
	t.Helper()
	b := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func clientTLS(t *testing.T, f TLSFiles, cluster *tls.Config) *tls.Config {
	t.Helper()
	c, err := ClientTLS(f, cluster)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MQTT over TLS (docs/DESIGN.md "Board services"): mqtts:// with the cluster CA,
// a given CA file, and a client certificate, against a real mosquitto over TLS.
func TestBridgeOverTLS(t *testing.T) {
	broker := mqtttest.BrokerTLS(t)
	pem, err := os.ReadFile(broker.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cases := []struct {
		name, url, prefix string
		tls               *tls.Config
	}{
		{"ca_file", broker.TLS, "a", clientTLS(t, TLSFiles{CAFile: broker.CAFile}, nil)},
		{"cluster CA", strings.Replace(broker.TLS, "mqtts://", "ssl://", 1), "b", clientTLS(t, TLSFiles{}, &tls.Config{RootCAs: pool})},
		{"client certificate", broker.MTLS, "c", clientTLS(t, TLSFiles{CAFile: broker.CAFile, CertFile: broker.CertFile, KeyFile: broker.KeyFile}, nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := mqtttest.Listen(t, broker.Plain, c.prefix+"/#")
			fc := relayCluster()
			runBridge(t, Options{Broker: c.url, TLS: c.tls, Topics: Topics{Prefix: c.prefix}, Source: fc, Actor: fc, Logger: testutil.Logger()})
			testutil.Eventually(t, "state published over TLS", func() bool {
				got, _ := rec.Last(c.prefix + "/relay1/state")
				return got == Off
			})
			rec.Publish(t, c.prefix+"/relay1/set", "TOGGLE")
			testutil.Eventually(t, "a command received over TLS", func() bool { return len(fc.commands()) == 1 })
		})
	}
}

// A broker whose certificate does not chain to the CA given is refused,
// and the log says why and against what; nothing is published.
func TestBridgeRefusesWrongCA(t *testing.T) {
	broker := mqtttest.BrokerTLS(t)
	cases := []struct {
		name, url, want string
		tls             *tls.Config
		caFile          string
	}{
		{"other CA", broker.TLS, "mqtt.ca_file " + broker.OtherCAFile, clientTLS(t, TLSFiles{CAFile: broker.OtherCAFile}, nil), broker.OtherCAFile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := mqtttest.Listen(t, broker.Plain, "x/#")
			var logs testutil.Buffer
			fc := relayCluster()
			runBridge(t, Options{Broker: c.url, TLS: c.tls, CAFile: c.caFile, Topics: Topics{Prefix: "x"}, Source: fc, Actor: fc, Logger: logs.Logger()})
			testutil.Eventually(t, "the refusal is logged", func() bool {
				return strings.Contains(logs.String(), "cannot connect to the broker") && strings.Contains(logs.String(), c.want)
			})
			if c.name == "other CA" && !strings.Contains(logs.String(), "certificate signed by unknown authority") {
				t.Errorf("log does not say why:\n%s", logs.String())
			}
			if got := rec.Topics(); len(got) != 0 {
				t.Fatalf("published through a refused connection: %v", got)
			}
		})
	}
}

// Plain TCP to a broker that is not on this board warns, once.
func TestPlainBrokerWarnsOnce(t *testing.T) {
	cases := []struct {
		broker string
		warns  int
	}{
		{"tcp://192.0.2.7:1883", 1},
		{"tcp://127.0.0.1:1883", 0},
		{"tcp://localhost:1883", 0},
		{"mqtts://192.0.2.7:8883", 0},
	}
	for _, c := range cases {
		// the warning is once per process: forget an earlier test's (or an
		// earlier -count run's) so this one is the first
		plainWarned.Delete(c.broker)
		var logs testutil.Buffer
		for range 3 {
			New(Options{Broker: c.broker, Logger: logs.Logger()})
		}
		if n := strings.Count(logs.String(), "plain TCP"); n != c.warns {
			t.Errorf("%s: %d warnings, want %d:\n%s", c.broker, n, c.warns, logs.String())
		}
	}
}

func TestClientTLSBadFiles(t *testing.T) {
	dir := t.TempDir()
	junk := dir + "/junk.pem"
	testutil.WriteFile(t, junk, []byte("not pem"), 0o600)
	cases := []struct {
		f   TLSFiles
		key string
	}{
		{TLSFiles{CAFile: dir + "/missing.pem"}, "ca_file"},
		{TLSFiles{CAFile: junk}, "ca_file"},
		{TLSFiles{CertFile: junk, KeyFile: junk}, "cert_file"},
	}
	for _, c := range cases {
		_, err := ClientTLS(c.f, nil)
		fe, ok := err.(*FileError)
		if !ok || fe.Key != c.key {
			t.Errorf("%+v: err %v, want a FileError for %s", c.f, err, c.key)
		}
	}
}
