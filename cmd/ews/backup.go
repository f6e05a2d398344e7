package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/backup"
)

// clusterBackup is `ews cluster backup`: every board's boot config and the
// remembered outputs into one archive (node/backup).
func clusterBackup(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster backup", "--url URL --token-file F --out FILE.tar.gz [--secrets [--bundle PATH]]",
		"Save every board's boot config (its [[rule]]s included) and every output's last commanded state into FILE.tar.gz.\n"+
			"Inline secrets (cluster.key, http.token) are left out unless --secrets, which also adds a board's bundle (--bundle);\n"+
			"an admin bundle (the one ews cluster init wrote) is never added, whatever its file name.\n"+
			"User accounts (ews user) are not saved yet. Exit 1 when a board could not be read (the archive says which).", stderr)
	url := fs.String("url", "", "any board of the cluster, e.g. http://10.0.0.11:8080")
	tokenFile := fs.String("token-file", "", "file holding the API token (default $EWS_TOKEN)")
	out := fs.String("out", "", "archive to write (.tar.gz)")
	secrets := fs.Bool("secrets", false, "keep inline secrets and add a board's bundle (the archive is then mode 0600)")
	bundlePath := fs.String("bundle", bundle.DefaultName, "with --secrets: the bundle to add; an admin bundle is left out")
	cacert := fs.String("cacert", "", "PEM of the cluster CA for boards with TLS on (ews cluster ca BUNDLE > ca.pem)")
	if code, ok := parse(fs, interleave(args, map[string]bool{"secrets": true})); !ok {
		return code
	}
	if *url == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews cluster backup: --url and --out are required")
		return exitUsage
	}
	tok := os.Getenv("EWS_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: %v\n", err)
			return exitUsage
		}
		tok = strings.TrimSpace(string(b))
	}
	base := boardURL(*url)
	client := &http.Client{Timeout: 10 * time.Second}
	if *cacert != "" {
		pool, err := readCA(*cacert)
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: %v\n", err)
			return exitUsage
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	o := backup.CollectOptions{URL: base, Token: tok, Client: client, Secrets: *secrets}
	if *secrets {
		b, err := os.ReadFile(*bundlePath)
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: --secrets adds the cluster bundle: %v (give --bundle PATH)\n", err)
			return exitUsage
		}
		if err := backup.CheckBundle(b); errors.Is(err, backup.ErrAdminBundle) {
			fmt.Fprintf(stderr, "ews cluster backup: %s is an admin bundle: left out (%v)\n", *bundlePath, strings.TrimPrefix(err.Error(), "backup: "))
		} else if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: --bundle %s: %v\n", *bundlePath, err)
			return exitUsage
		} else {
			o.Bundle = b
		}
	}
	a, err := backup.Collect(context.Background(), o)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster backup: %v\n", err)
		return exitError
	}
	mode := os.FileMode(0o644)
	if *secrets {
		mode = 0o600
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster backup: %v\n", err)
		return exitError
	}
	werr := backup.Write(f, a)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		fmt.Fprintf(stderr, "ews cluster backup: %s: %v\n", *out, werr)
		return exitError
	}
	missing := 0
	for _, b := range a.Manifest.Boards {
		if b.Missing != "" {
			missing++
			fmt.Fprintf(stderr, "ews cluster backup: board %s not saved: %s\n", b.Name, b.Missing)
		}
	}
	fmt.Fprintf(stdout, "ews: wrote %s: %d board configs, %d outputs of cluster %s; %s\n", *out, len(a.Configs), len(a.Outputs), a.Manifest.Cluster, backup.UsersNote)
	if missing > 0 {
		return exitError
	}
	return exitOK
}

// clusterRestore is `ews cluster restore`: a replacement board's boot
// directory from a backup.
func clusterRestore(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster restore", "--from FILE.tar.gz --board NAME --out DIR [--root ROOTDIR]",
		"Write board NAME's boot config and its outputs' last states into DIR, the mounted boot partition of its new\n"+
			"SD card, and (from a --secrets backup, with --root) its bundle into ROOTDIR/etc/ews, mode 0600: secrets never\n"+
			"go on the boot partition. A card already holding a config keeps it (with a warning when it differs); a card\n"+
			"or backup of another cluster is refused. Boot it: it rejoins under its name.", stderr)
	from := fs.String("from", "", "the backup archive (ews cluster backup --out)")
	board := fs.String("board", "", "the board to restore")
	out := fs.String("out", "", "the card's boot directory (e.g. /media/$USER/bootfs)")
	root := fs.String("root", "", "the card's root partition (e.g. /media/$USER/rootfs): where a --secrets backup's bundle goes")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *from == "" || *board == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews cluster restore: --from, --board and --out are required")
		return exitUsage
	}
	f, err := os.Open(*from)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster restore: %v\n", err)
		return exitError
	}
	a, err := backup.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster restore: %s: %v\n", *from, err)
		return exitError
	}
	res, err := backup.WriteCard(a, *board, *out)
	if *root != "" && a.Bundle != nil {
		res.Warnings = slices.DeleteFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--root") })
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "ews cluster restore: warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster restore: %v\n", err)
		return exitError
	}
	for _, p := range res.Wrote {
		fmt.Fprintf(stdout, "ews: wrote %s\n", p)
	}
	if *root != "" && a.Bundle != nil {
		sec, err := backup.WriteSecrets(a, *board, *root)
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster restore: %v\n", err)
			return exitError
		}
		for _, p := range sec.Wrote {
			fmt.Fprintf(stdout, "ews: wrote %s (mode 0600, the root partition)\n", p)
		}
	}
	return exitOK
}
