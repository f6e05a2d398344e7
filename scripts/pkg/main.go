// Command pkg builds the ews .deb packages from the dist/ binaries: go run ./scripts/pkg [--dist dist] [--version V] [--arch armhf,arm64,amd64].
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/debpkg"
)

func main() {
	dist := flag.String("dist", "dist", "directory holding ews-linux-<arch> binaries; the .debs go there too")
	version := flag.String("version", "dev", "version (git describe output is fine)")
	arches := flag.String("arch", "armhf,arm64,amd64", "Debian architectures to build, comma-separated")
	pkgDir := flag.String("packaging", "packaging", "the repository's packaging/ directory")
	mtime := flag.Int64("mtime", 0, "file times in the packages, Unix seconds (the commit time keeps builds reproducible); 0: the epoch")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pkg: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	failed := false
	for _, arch := range strings.Split(*arches, ",") {
		bin, ok := debpkg.Arches[arch]
		if !ok {
			known := make([]string, 0, len(debpkg.Arches))
			for a := range debpkg.Arches {
				known = append(known, a)
			}
			sort.Strings(known)
			fmt.Fprintf(os.Stderr, "pkg: unknown arch %q (want %s)\n", arch, strings.Join(known, ", "))
			os.Exit(2)
		}
		p, err := debpkg.Build(debpkg.Spec{Arch: arch, Binary: filepath.Join(*dist, bin), Version: *version, Packaging: *pkgDir, OutDir: *dist, MTime: stamp(*mtime)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		fi, _ := os.Stat(p)
		fmt.Printf("pkg: %s (%d bytes)\n", p, fi.Size())
	}
	if failed {
		os.Exit(1)
	}
}

func stamp(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}
