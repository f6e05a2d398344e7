// Package debpkg builds the ews .deb packages (armhf, arm64, amd64) with the nfpm library.
package debpkg

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

// Arches maps each Debian architecture we ship to the dist/ binary it is
// built from. armhf takes the armv6 build: Raspberry Pi OS armhf runs on the
// ARMv6 Pi Zero/1, where an armv7 binary dies with "Illegal instruction".
var Arches = map[string]string{
	"armhf": "ews-linux-armv6",
	"arm64": "ews-linux-arm64",
	"amd64": "ews-linux-amd64",
}

// Spec is one package to build.
type Spec struct {
	Arch      string    // Debian architecture: armhf, arm64 or amd64
	Binary    string    // the ews binary for that architecture
	Version   string    // `git describe` output or a plain version; made Debian-safe
	Packaging string    // the repository's packaging/ directory
	OutDir    string    // where the .deb goes
	MTime     time.Time // file times in the package (zero: the Unix epoch, so builds are reproducible)
}

// Build writes ews_<version>_<arch>.deb into s.OutDir and returns its path.
func Build(s Spec) (string, error) {
	if _, ok := Arches[s.Arch]; !ok {
		return "", fmt.Errorf("debpkg: unknown arch %q (want armhf, arm64 or amd64)", s.Arch)
	}
	if fi, err := os.Stat(s.Binary); err != nil {
		return "", fmt.Errorf("debpkg: binary: %w (run `make dist` first)", err)
	} else if fi.IsDir() {
		return "", fmt.Errorf("debpkg: binary %s is a directory", s.Binary)
	}
	mtime := s.MTime
	if mtime.IsZero() {
		mtime = time.Unix(0, 0).UTC()
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:          "ews",
		Arch:          s.Arch,
		Platform:      "linux",
		Version:       DebVersion(s.Version),
		VersionSchema: "none",
		Section:       "net",
		Priority:      "optional",
		Maintainer:    "ews maintainers <ews@localhost>",
		Description:   "embedded web server cluster firmware for ARM dev boards\n ews runs one board of a cluster that controls relays, LEDs, buttons and\n sensors through a web UI, queueing requests by priority on a master.",
		Homepage:      "https://github.com/ews-firmware/ews",
		License:       "MIT",
		MTime:         mtime,
		Overridables: nfpm.Overridables{
			Depends:    []string{"adduser"},
			Recommends: []string{"systemd"},
			Contents:   contents(s.Binary, s.Packaging, mtime),
			Scripts: nfpm.Scripts{
				PostInstall: filepath.Join(s.Packaging, "scripts", "postinst"),
				PreRemove:   filepath.Join(s.Packaging, "scripts", "prerm"),
				PostRemove:  filepath.Join(s.Packaging, "scripts", "postrm"),
			},
			Deb: nfpm.Deb{Compression: "xz"},
		},
	})
	if err := nfpm.PrepareForPackager(info, "deb"); err != nil {
		return "", fmt.Errorf("debpkg: %s: %w", s.Arch, err)
	}
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return "", fmt.Errorf("debpkg: %w", err)
	}
	out := filepath.Join(s.OutDir, deb.Default.ConventionalFileName(info))
	f, err := os.Create(out)
	if err != nil {
		return "", fmt.Errorf("debpkg: %w", err)
	}
	if err := deb.Default.Package(info, f); err != nil {
		f.Close()
		os.Remove(out)
		return "", fmt.Errorf("debpkg: %s: %w", s.Arch, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("debpkg: %w", err)
	}
	return out, nil
}

// contents is every file the package installs.
func contents(binary, pkg string, mtime time.Time) files.Contents {
	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, Type: files.TypeFile,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode, MTime: mtime}}
	}
	conf := file(filepath.Join(pkg, "ews.toml"), "/etc/ews/ews.toml", 0o644)
	conf.Type = files.TypeConfigNoReplace // a conffile: dpkg asks before replacing local edits
	return files.Contents{
		file(binary, "/usr/bin/ews", 0o755),
		file(filepath.Join(pkg, "ews.service"), "/usr/lib/systemd/system/ews.service", 0o644),
		file(filepath.Join(pkg, "sysusers.conf"), "/usr/lib/sysusers.d/ews.conf", 0o644),
		file(filepath.Join(pkg, "tmpfiles.conf"), "/usr/lib/tmpfiles.d/ews.conf", 0o644),
		conf,
		{Destination: "/var/lib/ews/cgi-bin", Type: files.TypeDir,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: 0o755, MTime: mtime}},
	}
}

var (
	describeRe = regexp.MustCompile(`^v?(\d+(?:\.\d+)*)(?:-(\d+)-g([0-9a-f]+))?(-dirty)?$`)
	unsafeRe   = regexp.MustCompile(`[^A-Za-z0-9.+~]`)
)

// DebVersion turns `git describe --tags --always --dirty` output into a
// Debian version that sorts right: v1.2.3 -> 1.2.3, v1.2.3-4-gabc -> 1.2.3+4.gabc,
// a bare commit abc123 -> 0.0.0+gabc123, "" -> 0.0.0~dev.
func DebVersion(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || v == "dev" {
		return "0.0.0~dev"
	}
	if m := describeRe.FindStringSubmatch(v); m != nil {
		out := m[1]
		if m[2] != "" {
			out += "+" + m[2] + ".g" + m[3]
		}
		if m[4] != "" {
			out += "~dirty" // sorts before the clean build of the same commit
		}
		return out
	}
	dirty := strings.HasSuffix(v, "-dirty")
	v = strings.TrimSuffix(v, "-dirty")
	out := "0.0.0+g" + unsafeRe.ReplaceAllString(v, ".")
	if dirty {
		out += "~dirty"
	}
	return out
}
