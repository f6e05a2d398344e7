package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ews-firmware/ews/internal/bundle"
)

const clusterHelp = `init [--out PATH] [--force] [DIR]: write a new cluster bundle (gossip key, API token, session secret, TLS CA), mode 0600, to PATH (default ./cluster.bundle, or DIR/cluster.bundle); prints the token once. Refuses to overwrite without --force.
join BUNDLE [--etc DIR] [--force]: install the bundle's cluster key, token and a copy of the bundle into DIR (default /etc/ews); refuses to replace different secrets without --force. Prints the files it wrote, never a secret.
ca BUNDLE: print the bundle's CA certificate (PEM, no secret) for browsers, curl and ews bench to trust the boards' HTTPS.
backup --url URL --token-file F --out FILE.tar.gz [--secrets]: save every board's boot config and the outputs' last states.
restore --from FILE.tar.gz --board NAME --out DIR: write a replacement board's boot directory from a backup.
Every board of a cluster needs the same bundle: make it once, install it on each board.`

func cmdCluster(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "init":
			return clusterInit(args[1:], stdout, stderr)
		case "join":
			return clusterJoin(args[1:], stdout, stderr)
		case "ca":
			return clusterCA(args[1:], stdout, stderr)
		case "backup": // issue 25 (backup.go)
			return clusterBackup(args[1:], stdout, stderr)
		case "restore": // issue 25 (backup.go)
			return clusterRestore(args[1:], stdout, stderr)
		}
	}
	fs := newFlags("cluster", "init [--out PATH] [--force] [DIR] | join BUNDLE [--etc DIR] [--force] | ca BUNDLE | backup ... | restore ...", clusterHelp, stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fs.Usage()
	return exitUsage
}

func clusterInit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster init", "[--out PATH] [--force] [DIR]", "Write a new cluster bundle, mode 0600; print its token once.", stderr)
	out := fs.String("out", "", "bundle file to write (default ./"+bundle.DefaultName+", or DIR/"+bundle.DefaultName+")")
	force := fs.Bool("force", false, "overwrite an existing bundle (boards installed from it will no longer work with new ones)")
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && *out != "") {
		fmt.Fprintln(stderr, "ews cluster init: give --out PATH or one DIR, not both")
		return exitUsage
	}
	path := *out
	switch {
	case fs.NArg() == 1:
		path = filepath.Join(fs.Arg(0), bundle.DefaultName)
	case path == "":
		path = bundle.DefaultName
	}
	b := bundle.New()
	if err := bundle.Write(path, b, *force); err != nil {
		fmt.Fprintf(stderr, "ews cluster init: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "ews: wrote the cluster bundle %s (mode 0600): gossip key, API token, session secret, TLS CA.\n", path)
	fmt.Fprintf(stdout, "API token (shown once; keep it: the UI login asks for it; it is also in %s):\n\n  %s\n\n", path, b.Token)
	fmt.Fprintf(stdout, "Boards with this bundle serve HTTPS (:8443) with its CA; trust it on a client with:\n  ews cluster ca %s > ews-ca.pem   (then curl --cacert ews-ca.pem, or import it in the browser)\n", path)
	fmt.Fprintf(stdout, "Install the same bundle on every board:\n  scripts/flash.sh --bundle %s ...   (SD card)\n  ews cluster join %s               (on a board, as root)\n  or copy it to /etc/ews/%s before installing the .deb\n", path, path, bundle.DefaultName)
	return exitOK
}

// clusterCA prints the CA certificate of a bundle: what a client installs
// to trust the boards (never the CA's key).
func clusterCA(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster ca", "BUNDLE", "Print the bundle's CA certificate, PEM: trust it in a browser, curl --cacert or ews bench --cacert.", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "ews cluster ca: want one BUNDLE file")
		fs.Usage()
		return exitUsage
	}
	b, err := bundle.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster ca: %v\n", err)
		return exitError
	}
	ca, err := b.CA()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster ca: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	if ca == nil {
		fmt.Fprintf(stderr, "ews cluster ca: %s is a version %d bundle: it has no CA (boards run without TLS); make a new one with ews cluster init\n", fs.Arg(0), b.Version)
		return exitError
	}
	_, _ = stdout.Write(ca.PEM)
	return exitOK
}

func clusterJoin(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster join", "BUNDLE [--etc DIR] [--force]", "Install the bundle's secrets into DIR: cluster.key (0600), token (0640), cluster.bundle (0600).", stderr)
	etc := fs.String("etc", "/etc/ews", "directory to install into")
	force := fs.Bool("force", false, "replace secrets that differ from the bundle's")
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "ews cluster join: want one BUNDLE file")
		fs.Usage()
		return exitUsage
	}
	b, err := bundle.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster join: %v\n", err)
		return exitError
	}
	if fi, err := os.Stat(fs.Arg(0)); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "ews cluster join: warning: %s is readable by others (mode %04o): it holds the cluster's secrets; chmod 600 it\n", fs.Arg(0), fi.Mode().Perm())
	}
	done, err := bundle.Install(*etc, b, *force)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster join: %v\n", err)
		return exitError
	}
	for _, f := range done {
		if f.Changed {
			fmt.Fprintf(stdout, "ews: wrote %s\n", f.Path)
		} else {
			fmt.Fprintf(stdout, "ews: %s already holds the bundle's secret\n", f.Path)
		}
	}
	return exitOK
}

// interleave moves flags after positional arguments to the front, so
// `join FILE --etc DIR` parses like `join --etc DIR FILE`. bools names the
// flags that take no value.
func interleave(args []string, bools map[string]bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := a[1:]
			if len(name) > 0 && name[0] == '-' {
				name = name[1:]
			}
			if !bools[name] && name != "h" && name != "help" && !strings.Contains(name, "=") && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(append(flags, "--"), pos...)
}
