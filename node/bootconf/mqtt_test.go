//go:build !lite

package bootconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/automation"
)

// [mqtt] over TLS is mapped onto the bridge: the cluster CA when no
// ca_file is named, none for plain TCP, and a bad ca_file refused with
// its key.
func TestAutomationMQTTTLS(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	testutil.WriteFile(t, junk, []byte("no certificate"), 0o600)
	cluster := &tls.Config{RootCAs: x509.NewCertPool()}
	cases := []struct {
		name, mqtt string
		errKey     string
		wantTLS    bool
		wantRoots  *x509.CertPool
	}{
		{"cluster CA", "broker = \"mqtts://10.0.0.5\"\n", "", true, cluster.RootCAs},
		{"plain", "broker = \"tcp://10.0.0.5\"\n", "", false, nil},
		{"bad ca_file", "broker = \"ssl://10.0.0.5\"\nca_file = \"" + junk + "\"\n", "mqtt.ca_file", false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("/boot/ews.toml", []byte("[http]\nauth = \"none\"\n[mqtt]\n"+c.mqtt))
			if err != nil {
				t.Fatal(err)
			}
			a, err := automation.New(automation.Options{Config: bootOf(t, cfg).Automation(), Logger: testutil.Logger(), Door: http.NotFoundHandler(), TLS: cluster})
			if c.errKey != "" {
				var es config.Errors
				if !errors.As(err, &es) || len(es) != 1 || es[0].Key != c.errKey || !strings.Contains(es[0].Error(), "/boot/ews.toml:5") {
					t.Fatalf("err %v, want one error at %s line 5", err, c.errKey)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.BridgeTLS() != nil; got != c.wantTLS {
				t.Fatalf("TLS set %v, want %v", got, c.wantTLS)
			}
			if c.wantTLS && a.BridgeTLS().RootCAs != c.wantRoots {
				t.Fatal("the bridge does not check the broker against the cluster CA")
			}
		})
	}
}
