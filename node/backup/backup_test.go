package backup

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

const conf2 = `[node]
name = "ews2"
[cluster]
peers = ["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946"]
key = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
[http]
token = "hunter2"
`

var peers = []string{"ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946"}

func out(name, node, state string, seq uint64) hal.Snapshot {
	return hal.Snapshot{Name: name, Node: node, Driver: "gpio-out", State: state, Value: state == "on", Seq: seq}
}

func testArchive() Archive {
	return Archive{
		Manifest: Manifest{Created: time.Unix(1700000000, 0).UTC(), Cluster: Cluster{Peers: peers, KeyID: KeyIDOf("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=")},
			Boards: []BoardEntry{{Name: "ews1"}, {Name: "ews2", Redacted: []string{"cluster.key"}}}, Users: UsersNote},
		Configs: map[string]string{"ews1": "[node]\nname = \"ews1\"\n", "ews2": conf2},
		Outputs: []hal.Snapshot{out("relay1", "ews2", "on", 5), out("relay9", "ews1", "off", 7)},
	}
}

// roundTrip is a written (data) and read back; t fails on an error.
func roundTrip(t *testing.T, a Archive) (Archive, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return back, buf.Bytes()
}

func TestArchiveRoundTrip(t *testing.T) {
	a, data := roundTrip(t, testArchive())
	if a.Configs["ews2"] != conf2 || len(a.Outputs) != 2 || a.Manifest.Format != Format || !a.Manifest.Cluster.Same(testArchive().Manifest.Cluster) || a.Bundle != nil {
		t.Errorf("read back %+v", a)
	}
	// bad input: truncated, not gzip, no manifest
	if _, err := Read(bytes.NewReader(data[:len(data)/2])); err == nil || !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "damaged") {
		t.Errorf("truncated archive: %v", err)
	}
	if _, err := Read(strings.NewReader("[node]\n")); err == nil || !strings.Contains(err.Error(), "not a backup archive") {
		t.Errorf("a toml file: %v", err)
	}
}

func TestMerge(t *testing.T) {
	got := Merge(
		[]hal.Snapshot{out("relay1", "ews2", "off", 3), out("boot", "ews2", "off", 0), out("bus", "any", "on", 9)},
		[]hal.Snapshot{out("relay1", "ews2", "on", 5)},
		[]hal.Snapshot{out("relay1", "ews2", "off", 4)},
	)
	if len(got) != 1 || got[0].State != "on" || got[0].Seq != 5 {
		t.Errorf("Merge = %+v, want relay1 on at 5 only", got)
	}
}

func TestRedact(t *testing.T) {
	text, keys := Redact(conf2, map[string]int{"cluster.key": 5, "http.token": 7})
	if strings.Contains(text, "hunter2") || strings.Contains(text, "c2VjcmV0") {
		t.Errorf("secrets left in:\n%s", text)
	}
	if !strings.Contains(text, "# cluster.key: secret left out") || strings.Join(keys, ",") != "cluster.key,http.token" {
		t.Errorf("redacted %v:\n%s", keys, text)
	}
	if strings.Count(text, "\n") != strings.Count(conf2, "\n") {
		t.Error("line count changed")
	}
}

func TestHandler(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ews.toml")
	testutil.WriteFile(t, p, []byte(conf2), 0o600)
	h := Handler(Options{Name: "ews2", ConfigPath: p, Secrets: map[string]int{"cluster.key": 5, "http.token": 7}, Cluster: Cluster{Peers: peers}})
	get := func(q string) BoardConfig {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path+q, nil))
		var bc BoardConfig
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &bc) != nil {
			t.Fatalf("GET %s: %d %s", q, rec.Code, rec.Body)
		}
		return bc
	}
	if bc := get(""); strings.Contains(bc.Config, "hunter2") || len(bc.Redacted) != 2 || bc.Name != "ews2" || len(bc.SHA256) != 64 {
		t.Errorf("default: %+v", bc)
	}
	if bc := get("?secrets=1"); bc.Config != conf2 {
		t.Errorf("secrets=1: %q", bc.Config)
	}
	rec := httptest.NewRecorder()
	Handler(Options{Name: "ews9"}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path, nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("no config file: %d", rec.Code)
	}
}

func TestWriteCard(t *testing.T) {
	t.Run("fresh card", func(t *testing.T) {
		dir := t.TempDir()
		res, err := WriteCard(testArchive(), "ews2", dir)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
		if string(b) != conf2 {
			t.Errorf("config %q", b)
		}
		var outs []hal.Snapshot
		b, _ = os.ReadFile(filepath.Join(dir, OutputsFile))
		if json.Unmarshal(b, &outs) != nil || len(outs) != 1 || outs[0].Name != "relay1" {
			t.Errorf("outputs %s: want only ews2's relay1", b)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "cluster.key left out") {
			t.Errorf("warnings %v: want the redacted key named", res.Warnings)
		}
	})
	t.Run("card of another cluster is refused", func(t *testing.T) {
		dir := t.TempDir()
		other := strings.Replace(conf2, "10.0.0.12", "192.168.1.12", 1)
		testutil.WriteFile(t, filepath.Join(dir, ConfigFile), []byte(other), 0o644)
		_, err := WriteCard(testArchive(), "ews2", dir)
		if err == nil || !strings.Contains(err.Error(), "ews2=10.0.0.12:7946") || !strings.Contains(err.Error(), "ews2=192.168.1.12:7946") {
			t.Fatalf("err %v: want a refusal naming both clusters", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ConfigFile)); string(b) != other {
			t.Error("the card's config was changed")
		}
	})
	t.Run("same peers, another key is refused", func(t *testing.T) {
		dir := t.TempDir()
		other := strings.Replace(conf2, "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", "b3RoZXJvdGhlcm90aGVyb3RoZXJvdGhlcm90aGVyMTI=", 1)
		os.WriteFile(filepath.Join(dir, ConfigFile), []byte(other), 0o644)
		if _, err := WriteCard(testArchive(), "ews2", dir); err == nil || !strings.Contains(err.Error(), "key") {
			t.Fatalf("err %v: want refused for another key", err)
		}
	})
	t.Run("a different config of the same cluster is kept with a warning", func(t *testing.T) {
		dir := t.TempDir()
		card := conf2 + "\n[[device]]\nname = \"new\"\ndriver = \"sim-switch\"\n"
		os.WriteFile(filepath.Join(dir, ConfigFile), []byte(card), 0o644)
		res, err := WriteCard(testArchive(), "ews2", dir)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ConfigFile)); string(b) != card {
			t.Error("the card's config was replaced")
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ConfigFile+".from-backup")); string(b) != conf2 {
			t.Error("the backup's config is not beside it")
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "kept the card's") {
			t.Errorf("warnings %v", res.Warnings)
		}
	})
	t.Run("unknown board", func(t *testing.T) {
		if _, err := WriteCard(testArchive(), "ews7", t.TempDir()); err == nil || !strings.Contains(err.Error(), "ews1, ews2") {
			t.Errorf("err %v", err)
		}
	})
}
