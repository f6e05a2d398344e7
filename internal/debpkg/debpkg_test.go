package debpkg

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ulikunitz/xz"
)

const packaging = "../../packaging"

// entry is one file of a tar inside the .deb.
type entry struct {
	mode     int64
	typ      byte
	uid, gid int
	body     []byte
}

// readAr splits an ar archive (the .deb container) into its members.
func readAr(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(data, []byte(magic)) {
		t.Fatalf("not an ar archive: %q", data[:min(len(data), 8)])
	}
	members := map[string][]byte{}
	var order []string
	for p := len(magic); p < len(data); {
		if p+60 > len(data) {
			t.Fatalf("truncated ar header at %d", p)
		}
		hdr := data[p : p+60]
		name := strings.TrimSuffix(strings.TrimSpace(string(hdr[0:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(hdr[48:58])))
		if err != nil || p+60+size > len(data) {
			t.Fatalf("bad ar member size %q", hdr[48:58])
		}
		members[name] = data[p+60 : p+60+size]
		order = append(order, name)
		p += 60 + size + size%2
	}
	if len(order) < 3 || order[0] != "debian-binary" || !strings.HasPrefix(order[1], "control.tar") || !strings.HasPrefix(order[2], "data.tar") {
		t.Fatalf("ar members %v, want debian-binary, control.tar.*, data.tar.*", order)
	}
	return members
}

// readTar reads a (compressed) tar into name -> entry, names without "./".
func readTar(t *testing.T, name string, data []byte) map[string]entry {
	t.Helper()
	var r io.Reader = bytes.NewReader(data)
	var err error
	switch {
	case strings.HasSuffix(name, ".gz"):
		r, err = gzip.NewReader(r)
	case strings.HasSuffix(name, ".xz"):
		r, err = xz.NewReader(r)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[string]entry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(tr)
		out[strings.TrimPrefix(strings.TrimPrefix(h.Name, "."), "/")] = entry{mode: h.Mode & 0o7777, typ: h.Typeflag, uid: h.Uid, gid: h.Gid, body: body}
	}
}

func member(t *testing.T, m map[string][]byte, prefix string) (string, []byte) {
	t.Helper()
	for name, b := range m {
		if strings.HasPrefix(name, prefix) {
			return name, b
		}
	}
	t.Fatalf("no %s* member", prefix)
	return "", nil
}

func buildAmd64(t *testing.T) (debPath string, bin []byte) {
	t.Helper()
	dir := t.TempDir()
	bin = []byte("#!/bin/sh\necho fake ews\n")
	binPath := filepath.Join(dir, "ews-linux-amd64")
	testutil.WriteFile(t, binPath, bin, 0o755)
	p, err := Build(Spec{Arch: "amd64", Binary: binPath, Version: "v1.2.3-4-gabcdef0", Packaging: packaging, OutDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	return p, bin
}

func TestBuildDebContents(t *testing.T) {
	p, bin := buildAmd64(t)
	if filepath.Base(p) != "ews_1.2.3+4.gabcdef0_amd64.deb" {
		t.Fatalf("file name %s", filepath.Base(p))
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ar := readAr(t, data)
	if string(ar["debian-binary"]) != "2.0\n" {
		t.Fatalf("debian-binary %q", ar["debian-binary"])
	}

	cname, cdata := member(t, ar, "control.tar")
	control := readTar(t, cname, cdata)
	fields := string(control["control"].body)
	for _, want := range []string{"Package: ews\n", "Version: 1.2.3+4.gabcdef0\n", "Architecture: amd64\n", "Depends: adduser\n"} {
		if !strings.Contains(fields, want) {
			t.Errorf("control lacks %q:\n%s", want, fields)
		}
	}
	if got := strings.TrimSpace(string(control["conffiles"].body)); got != "/etc/ews/ews.toml" {
		t.Errorf("conffiles = %q, want /etc/ews/ews.toml", got)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		e, ok := control[s]
		want, _ := os.ReadFile(filepath.Join(packaging, "scripts", s))
		if !ok || e.mode&0o111 == 0 || !bytes.Equal(e.body, want) {
			t.Errorf("maintainer script %s: present %v, mode %o, same as packaging/scripts: %v", s, ok, e.mode, bytes.Equal(e.body, want))
		}
	}

	dname, ddata := member(t, ar, "data.tar")
	files := readTar(t, dname, ddata)
	want := []struct {
		path, src string
		mode      int64
	}{
		{"usr/bin/ews", "", 0o755},
		{"usr/lib/systemd/system/ews.service", "ews.service", 0o644},
		{"usr/lib/sysusers.d/ews.conf", "sysusers.conf", 0o644},
		{"usr/lib/tmpfiles.d/ews.conf", "tmpfiles.conf", 0o644},
		{"etc/ews/ews.toml", "ews.toml", 0o644},
	}
	for _, w := range want {
		e, ok := files[w.path]
		if !ok {
			t.Errorf("data.tar lacks %s; has %v", w.path, keys(files))
			continue
		}
		body := bin
		if w.src != "" {
			body, _ = os.ReadFile(filepath.Join(packaging, w.src))
		}
		if e.mode != w.mode || e.uid != 0 || e.gid != 0 || !bytes.Equal(e.body, body) {
			t.Errorf("%s: mode %o uid %d gid %d, same content %v; want mode %o root:root", w.path, e.mode, e.uid, e.gid, bytes.Equal(e.body, body), w.mode)
		}
	}
	if e, ok := files["var/lib/ews/cgi-bin/"]; !ok || e.typ != tar.TypeDir {
		t.Errorf("data.tar lacks the directory var/lib/ews/cgi-bin/; has %v", keys(files))
	}
	md5s := string(control["md5sums"].body)
	if !strings.Contains(md5s, "usr/bin/ews") {
		t.Errorf("md5sums lacks usr/bin/ews:\n%s", md5s)
	}

	if _, err := exec.LookPath("dpkg-deb"); err == nil { // the real tool agrees
		out, err := exec.Command("dpkg-deb", "--contents", p).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "./usr/bin/ews") {
			t.Errorf("dpkg-deb --contents: %v\n%s", err, out)
		}
		out, err = exec.Command("dpkg-deb", "--field", p, "Architecture").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "amd64" {
			t.Errorf("dpkg-deb --field Architecture: %q %v", out, err)
		}
	}
}

func keys(m map[string]entry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// unitKeys reads the [Service] assignments of a unit file.
func unitKeys(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		default:
			k, v, _ := strings.Cut(line, "=")
			out[section+k] = append(out[section+k], v)
		}
	}
	return out
}

func TestUnitHardening(t *testing.T) {
	u := unitKeys(t, filepath.Join(packaging, "ews.service"))
	want := map[string]string{
		"Type": "notify", "Restart": "on-failure", "WatchdogSec": "10s", "User": "ews",
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ReadWritePaths": "/var/lib/ews /etc/ews",
		"PrivateTmp": "yes", "ProtectHome": "yes", "SupplementaryGroups": "gpio i2c",
		// SETUID/SETGID/KILL: CGI programs run as ews-cgi and are killed (cgiuser_test.go)
		"AmbientCapabilities": "CAP_NET_BIND_SERVICE CAP_SETUID CAP_SETGID CAP_KILL", "CapabilityBoundingSet": "CAP_NET_BIND_SERVICE CAP_SETUID CAP_SETGID CAP_KILL",
		"ExecStart": "/usr/bin/ews run", "KillMode": "mixed", "DevicePolicy": "closed",
	}
	for k, v := range want {
		if got := u["[Service]"+k]; len(got) != 1 || got[0] != v {
			t.Errorf("[Service] %s = %q, want %q", k, got, v)
		}
	}
	allow := strings.Join(u["[Service]DeviceAllow"], ",")
	for _, d := range []string{"char-gpiochip rw", "char-i2c rw"} {
		if !strings.Contains(allow, d) {
			t.Errorf("DeviceAllow lacks %q: %s", d, allow)
		}
	}
	if got := u["[Install]WantedBy"]; len(got) != 1 || got[0] != "multi-user.target" {
		t.Errorf("WantedBy = %q", got)
	}
}

// TestUnitVerifies runs systemd-analyze verify on the unit, pointing
// ExecStart at a real executable since /usr/bin/ews is not installed here.
func TestUnitVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "ews")
	testutil.WriteFile(t, fake, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	unit, err := os.ReadFile(filepath.Join(packaging, "ews.service"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ews.service")
	testutil.WriteFile(t, path, bytes.ReplaceAll(unit, []byte("/usr/bin/ews"), []byte(fake)), 0o644)
	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// verify also warns without failing; none of the warnings may be about our unit.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "ews.service") {
			t.Errorf("systemd-analyze: %s", line)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, arch, bin, want string }{
		{"unknown arch", "mips", filepath.Join(packaging, "ews.toml"), "unknown arch"},
		{"missing binary", "arm64", filepath.Join(dir, "nope"), "make dist"},
		{"binary is a dir", "arm64", dir, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(Spec{Arch: tt.arch, Binary: tt.bin, Packaging: packaging, OutDir: dir})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDebVersion(t *testing.T) {
	tests := map[string]string{
		"":                    "0.0.0~dev",
		"dev":                 "0.0.0~dev",
		"v1.2.3":              "1.2.3",
		"1.2":                 "1.2",
		"v1.2.3-4-gabc1234":   "1.2.3+4.gabc1234",
		"v1.2.3-dirty":        "1.2.3~dirty",
		"ff06826":             "0.0.0+gff06826",
		"ff06826-dirty":       "0.0.0+gff06826~dirty",
		"feature/x_y":         "0.0.0+gfeature.x.y",
		"v1.2.3-4-gabc-dirty": "1.2.3+4.gabc~dirty",
	}
	for in, want := range tests {
		if got := DebVersion(in); got != want {
			t.Errorf("DebVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPackagedConfigLoads(t *testing.T) {
	cfg, err := config.Load(filepath.Join(packaging, "ews.toml"))
	if err != nil {
		t.Fatalf("packaging/ews.toml: %v", err)
	}
	if !cfg.Standalone() || cfg.CGI.Dir != "/var/lib/ews/cgi-bin" || cfg.HTTP.TokenFile != "/etc/ews/token" {
		t.Fatalf("packaged config: standalone %v, cgi %q, token_file %q", cfg.Standalone(), cfg.CGI.Dir, cfg.HTTP.TokenFile)
	}
}
