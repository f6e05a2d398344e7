package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/tool/demo"
	"github.com/ews-firmware/ews/node/firmware"
)

// The firmware e2e tests' cluster: one admin bundle for the whole run
// (boards ews1..ews5 on loopback), its boards' bundles, signed images.
var (
	fwAdminOnce sync.Once
	fwAdmin     *bundle.Bundle
	fwAdminErr  error
)

func firmwareAdmin(t *testing.T) *bundle.Bundle {
	t.Helper()
	fwAdminOnce.Do(func() {
		fwAdmin, fwAdminErr = bundle.NewAdmin(clustertls.Scope{Boards: []string{"ews1", "ews2", "ews3", "ews4", "ews5"}}, time.Now())
	})
	if fwAdminErr != nil {
		t.Fatal(fwAdminErr)
	}
	return fwAdmin
}

// signedCopy is bin signed with the test cluster's firmware key, in a temp file.
func signedCopy(t *testing.T, bin string) string {
	t.Helper()
	key, err := firmwareAdmin(t).Signer()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(bin)+".signed")
	if err := os.WriteFile(p, firmware.Sign(data, key), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// withBundle gives board name's demo config its own board bundle (so it
// holds the firmware verify key) and keeps it on plain HTTP, as the
// firmware tests read it.
func withBundle(t *testing.T, dir, name, doc string) string {
	t.Helper()
	b, err := firmwareAdmin(t).Board(name, []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".bundle")
	if err := bundle.Write(p, b, true); err != nil {
		t.Fatal(err)
	}
	line := "bundle_file = \"" + p + "\"\n"
	if strings.Contains(doc, "[cluster]\n") {
		doc = strings.Replace(doc, "[cluster]\n", "[cluster]\n"+line, 1)
	} else {
		doc += "\n[cluster]\n" + line
	}
	return strings.Replace(doc, "[http]\n", "[http]\ntls = false\n", 1)
}

// tokenFile holds demo.Token, for --token-file.
func tokenFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(demo.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
