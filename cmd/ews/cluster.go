package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
)

// adminFile and boardSuffix are the default names of the admin bundle and
// of a board's (NAME.board.bundle), told apart by name as by content; a
// bundle of any other name (cluster.bundle, of earlier builds) still works.
const (
	adminFile   = "admin.bundle"
	boardSuffix = ".board.bundle"
)

const clusterHelp = `init (--peers LIST | --board NAME...) [--dns NAME]... [--net CIDR]... [--out PATH] [--force] [DIR]: write the admin bundle (gossip key, API token, session secret, the CA and its key, the firmware signing key), mode 0600, to PATH (default ./admin.bundle, or DIR/admin.bundle); prints the token once. The CA may certify the boards named and nothing else. It never goes on a board.
board NAME [--addr HOST]... --bundle ADMIN [--out FILE]: mint board NAME's bundle (default ./NAME.board.bundle) (its certificate and key, no CA key, no signing key).
join BUNDLE [--name NAME [--addr HOST]...] [--etc DIR] [--force]: install a board bundle (or mint this board's from the admin bundle with --name) into DIR (default /etc/ews): cluster.key, cluster.bundle (and token for a bundle of an earlier build that carries one), each 0600; refuses to replace different secrets without --force.
migrate OLD --out ADMIN (--peers LIST | --board NAME...): turn a version 1 or 2 bundle into an admin bundle, keeping its gossip key and token.
backup --url URL [--bundle ADMIN | --token-file F] [--cacert ca.pem] --out FILE.tar.gz [--secrets]: save every board's boot config, the outputs' last states, the configuration and users stores.
restore --from FILE.tar.gz (--board NAME --out DIR [--root R] | --url URL): from a backup, write a replacement board's card, or put the configuration and users stores back on a running cluster (--url).
ca BUNDLE: print the bundle's CA certificate (PEM, no secret) for browsers, curl and ews bench to trust the boards' HTTPS.
raft --url URL [--json]: the cluster's durable log (users, configuration, revocations) as that board sees it: leader, voters, last index.
revoke NAME --bundle ADMIN --url URL [--cacert ca.pem]: revoke board NAME (a stolen card): every board refuses its certificate and gossip and shows it revoked.
rotate --bundle ADMIN --url URL [--cacert ca.pem] [--timeout D]: roll a new gossip key and session secret through the running boards (no reflashing) and write them into the admin bundle; users' tokens stay, sessions end.
enrol NAME --bundle ADMIN --url URL [--addr HOST]...: add board NAME with a one-time enrolment code: its bundle is minted here, sealed under the code and left with the board at URL; the new board's first-run page takes the code and URL.`

func cmdCluster(args []string, stdout, stderr io.Writer) int {
	return subcommand("cluster", "init ... | board NAME ... | join BUNDLE ... | migrate OLD ... | ca BUNDLE | backup ... | restore ... | raft --url URL | revoke NAME ... | rotate ... | enrol NAME ...", clusterHelp, map[string]runner{
		"init":    clusterInit,
		"join":    clusterJoin,
		"ca":      clusterCA,
		"board":   clusterBoard,
		"migrate": clusterMigrate,
		"backup":  clusterBackup,  // backup.go
		"restore": clusterRestore, // backup.go
		"raft":    clusterRaft,    // cluster_raft.go
		"revoke":  clusterRevoke,  // cluster_revoke.go
		"rotate":  clusterRotate,  // cluster_rotate.go
		"enrol":   clusterEnrol,   // cluster_enrol.go
	}, args, stdout, stderr)
}

func clusterInit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster init", "(--peers LIST | --board NAME...) [--dns NAME]... [--net CIDR]... [--out PATH] [--force] [DIR]", "Write the admin bundle, mode 0600; print its token once. It never goes on a board.", stderr)
	out := fs.String("out", "", "bundle file to write (default ./"+adminFile+", or DIR/"+adminFile+")")
	force := fs.Bool("force", false, "overwrite an existing bundle (boards installed from it will no longer work with new ones)")
	sf := addScopeFlags(fs)
	if code, ok := parse(fs, interleave(args, map[string]bool{"force": true})); !ok {
		return code
	}
	sc, err := sf.scope()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster init: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && *out != "") {
		fmt.Fprintln(stderr, "ews cluster init: give --out PATH or one DIR, not both")
		return exitUsage
	}
	path := *out
	switch {
	case fs.NArg() == 1:
		path = filepath.Join(fs.Arg(0), adminFile)
	case path == "":
		path = adminFile
	}
	b, err := bundle.NewAdmin(sc, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster init: %v\n", err)
		return exitError
	}
	if err := bundle.Write(path, b, *force); err != nil {
		fmt.Fprintf(stderr, "ews cluster init: %v\n", err)
		return exitError
	}
	ca, _ := b.CA()
	fmt.Fprintf(stdout, "ews: wrote the admin bundle %s (mode 0600): gossip key, API token, session secret, the TLS CA and its key, the firmware signing key. It never goes on a board.\n", path)
	fmt.Fprintf(stdout, "The CA may certify %s; it is valid until %s.\n", describeScope(sc), ca.Cert.NotAfter.UTC().Format("2006-01-02"))
	fmt.Fprintf(stdout, "API token of user admin (shown once; keep it: the UI login asks for it; it is also in %s, and never on a board: a board's card holds only its hash):\n\n  %s\n\n", path, b.Token)
	fmt.Fprintf(stdout, "Boards with this bundle serve HTTPS (:8443) with its CA; trust it on a client with:\n  ews cluster ca %s > ews-ca.pem   (then curl --cacert ews-ca.pem, or import it in the browser)\n", path)
	fmt.Fprintf(stdout, "Give each board its own bundle minted from it:\n  scripts/flash.sh --bundle %s ...            (SD card)\n  ews cluster board NAME --bundle %s   (writes NAME%s; copy it to the board's /etc/ews/%s)\n", path, path, boardSuffix, bundle.DefaultName)
	return exitOK
}

// bundleArg parses args into fs and reads the one BUNDLE file they name,
// saying what is wrong, after fs.Name(), when they do not (usage) or it
// cannot be read.
func bundleArg(fs *flag.FlagSet, args []string, stderr io.Writer) (*bundle.Bundle, int, bool) {
	if code, ok := parse(fs, args); !ok {
		return nil, code, false
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "%s: want one BUNDLE file\n", fs.Name())
		fs.Usage()
		return nil, exitUsage, false
	}
	b, err := bundle.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return nil, exitError, false
	}
	return b, exitOK, true
}

// clusterCA prints the CA certificate of a bundle: what a client installs
// to trust the boards (never the CA's key).
func clusterCA(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster ca", "BUNDLE", "Print the bundle's CA certificate, PEM: trust it in a browser, curl --cacert or ews bench --cacert.", stderr)
	b, code, ok := bundleArg(fs, args, stderr)
	if !ok {
		return code
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
	fs := newFlags("cluster join", "BUNDLE [--name NAME [--addr HOST]...] [--etc DIR] [--force]", "Install a board bundle into DIR: cluster.key, cluster.bundle (token too from a board bundle of an earlier build), each 0600 (owned by ews when run as root).\nGiven the admin bundle and --name, mint this board's bundle from it first; the admin bundle is not copied.", stderr)
	etc := fs.String("etc", "/etc/ews", "directory to install into")
	name := fs.String("name", "", "this board's name: mint its bundle from the admin bundle BUNDLE")
	var addrs listFlag
	fs.Var(&addrs, "addr", "with --name: an address (or DNS name) the board is reached at; repeat")
	force := fs.Bool("force", false, "replace secrets that differ from the bundle's")
	b, code, ok := bundleArg(fs, interleave(args, map[string]bool{"force": true}), stderr)
	if !ok {
		return code
	}
	if fi, err := os.Stat(fs.Arg(0)); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "ews cluster join: warning: %s is readable by others (mode %04o): it holds the cluster's secrets; chmod 600 it\n", fs.Arg(0), fi.Mode().Perm())
	}
	switch {
	case b.IsAdmin() && *name == "":
		fmt.Fprintf(stderr, "ews cluster join: %s is the admin bundle (it holds the CA key and the firmware signing key): give --name NAME to mint this board's own bundle from it, or install one made with ews cluster board\n", fs.Arg(0))
		return exitUsage
	case b.IsAdmin():
		var err error
		if b, err = b.Board(*name, addrs, time.Now()); err != nil {
			fmt.Fprintf(stderr, "ews cluster join: %v\n", err)
			return exitError
		}
	case *name != "" && b.IsBoard() && b.Name != *name:
		fmt.Fprintf(stderr, "ews cluster join: %s is board %s's bundle, not %s's\n", fs.Arg(0), b.Name, *name)
		return exitError
	case *name != "" && !b.IsBoard():
		fmt.Fprintf(stderr, "ews cluster join: --name mints from the admin bundle: %v\n", b.NeedAdmin(fs.Arg(0)))
		return exitError
	case b.CAKey != "":
		fmt.Fprintf(stderr, "ews cluster join: %s is a version %d bundle: it holds the cluster's CA key, which no longer goes on a board; make the admin bundle with `ews cluster migrate %s --peers LIST --out ADMIN` (it keeps the key and token), then join with it and --name\n", fs.Arg(0), b.Version, fs.Arg(0))
		return exitError
	}
	uid, gid := serviceOwner()
	done, err := bundle.InstallOwned(*etc, b, *force, uid, gid)
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
