package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/backup"
	"github.com/ews-firmware/ews/node/bootconf"
)

// clusterBackup is `ews cluster backup`: every board's boot config and the
// remembered outputs into one archive (node/backup).
func clusterBackup(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster backup", "--url URL [--bundle ADMIN | --token-file F] [--cacert ca.pem] --out FILE.tar.gz [--secrets [--bundle BOARD]]",
		"Save every board's boot config (its [[rule]]s included), every output's last commanded state, the configuration\n"+
			"store (GET /api/config) and the users store (ews user) into FILE.tar.gz. Needs an admin's token: --bundle ADMIN\n"+
			"(its token and CA, as ews config pull|push), --token-file F or $EWS_TOKEN; --cacert ca.pem for TLS.\n"+
			"Inline secrets (cluster.key, http.token) and the users' token and password hashes are left out unless --secrets,\n"+
			"which also adds a board's bundle (--bundle, default ./"+bundle.DefaultName+"); an admin bundle (the one ews cluster init wrote) is\n"+
			"never added, whatever its file name. Exit 1 when a board or a store could not be read (the archive says which).", stderr)
	url := fs.String("url", "", "any board of the cluster, e.g. http://10.0.0.11:8080")
	cf := addCredFlags(fs, "the admin bundle (its token, and its CA for boards with TLS on), or with --secrets a board's bundle to add (its CA trusted too; default ./"+bundle.DefaultName+"); an admin bundle is never added")
	out := fs.String("out", "", "archive to write (.tar.gz)")
	secrets := fs.Bool("secrets", false, "keep inline secrets and add a board's bundle (the archive is then mode 0600)")
	if code, ok := parse(fs, interleave(args, map[string]bool{"secrets": true})); !ok {
		return code
	}
	if *url == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ews cluster backup: --url and --out are required")
		return exitUsage
	}
	base := boardURL(*url)
	cr, code := cf.load("cluster backup", 10*time.Second, false, stderr)
	if code != exitOK {
		return code
	}
	o := backup.CollectOptions{URL: base, Token: cr.token, Client: cr.client, Secrets: *secrets}
	if *secrets {
		bundlePath := *cf.bundle
		if bundlePath == "" {
			bundlePath = bundle.DefaultName
		}
		b, err := os.ReadFile(bundlePath)
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: --secrets adds the cluster bundle: %v (give --bundle PATH)\n", err)
			return exitUsage
		}
		if err := backup.CheckBundle(b); errors.Is(err, backup.ErrAdminBundle) {
			fmt.Fprintf(stderr, "ews cluster backup: %s is an admin bundle: left out (%v)\n", bundlePath, strings.TrimPrefix(err.Error(), "backup: "))
		} else if err != nil {
			fmt.Fprintf(stderr, "ews cluster backup: --bundle %s: %v\n", bundlePath, err)
			return exitUsage
		} else {
			o.Bundle = b
		}
	}
	a, err := backup.Collect(context.Background(), o)
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster backup: %v%s\n", err, tlsHint(err))
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
	missing := len(a.Manifest.Stores)
	for _, m := range a.Manifest.Stores {
		fmt.Fprintf(stderr, "ews cluster backup: not saved: %s\n", m)
	}
	for _, b := range a.Manifest.Boards {
		if b.Missing != "" {
			missing++
			fmt.Fprintf(stderr, "ews cluster backup: board %s not saved: %s%s\n", b.Name, b.Missing, tlsHint(errors.New(b.Missing)))
		}
	}
	fmt.Fprintf(stdout, "ews: wrote %s: %d board configs, %d outputs, configuration version %d, %d users (version %d) of cluster %s; %s\n",
		*out, len(a.Configs), len(a.Outputs), a.Manifest.ConfigVersion, usersIn(a), a.Manifest.UsersVersion, a.Manifest.Cluster, a.Manifest.Users)
	if missing > 0 {
		return exitError
	}
	return exitOK
}

// usersIn counts the users a backup holds.
func usersIn(a backup.Archive) int {
	if a.Users == nil {
		return 0
	}
	return len(a.Users.Users)
}

// checkStoreText checks a backup's configuration document as `ews config
// check` does (bootconf.CheckStoreText).
func checkStoreText(text, boot []byte) []string { return bootconf.CheckStoreText(text, boot) }

// clusterRestore is `ews cluster restore`: a replacement board's boot
// directory from a backup, or the cluster's stores back on a running
// cluster (--url).
func clusterRestore(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cluster restore", "--from FILE.tar.gz (--board NAME --out DIR [--root ROOTDIR] | --url URL [--bundle ADMIN | --token-file F] [--cacert ca.pem])",
		"Write board NAME's boot config and its outputs' last states into DIR, the mounted boot partition of its new\n"+
			"SD card, and with --root the cluster's configuration and users stores into ROOTDIR's state_dir (the board\n"+
			"seeds a cluster's stores from them when no peer holds them) and, from a --secrets backup, its bundle into\n"+
			"ROOTDIR/etc/ews, mode 0600: secrets never go on the boot partition. A card already holding a config keeps it\n"+
			"(with a warning when it differs); a card or backup of another cluster is refused. Boot it: it rejoins under its name.\n"+
			"With --url instead: put the backup's configuration store and users back on the running cluster, each as its\n"+
			"store's next version (an admin's token). Everything is checked first: a damaged backup, or a configuration that\n"+
			"fails `ews config check`, changes nothing.", stderr)
	from := fs.String("from", "", "the backup archive (ews cluster backup --out)")
	board := fs.String("board", "", "the board to restore")
	out := fs.String("out", "", "the card's boot directory (e.g. /media/$USER/bootfs)")
	root := fs.String("root", "", "the card's root partition (e.g. /media/$USER/rootfs): where the stores and a --secrets backup's bundle go")
	url := fs.String("url", "", "a board of the running cluster: restore the stores through its API")
	cf := addCredFlags(fs, "with --url: the admin bundle (its token, and its CA for boards with TLS on)")
	if code, ok := parse(fs, interleave(args, nil)); !ok {
		return code
	}
	if *from == "" || fs.NArg() > 0 || (*url == "" && (*board == "" || *out == "")) || (*url != "" && (*board != "" || *out != "")) {
		fmt.Fprintln(stderr, "ews cluster restore: --from and either --board and --out (a card) or --url (a running cluster) are required")
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
	if *url != "" {
		cr, code := cf.load("cluster restore", 10*time.Second, false, stderr)
		if code != exitOK {
			return code
		}
		return restoreStores(a, *url, cr, stdout, stderr)
	}
	stores := a.Config != "" || a.Users != nil
	if stores {
		if err := backup.CheckStores(a, *board, checkStoreText); err != nil {
			fmt.Fprintf(stderr, "ews cluster restore: %s: %v\n", *from, err)
			return exitError
		}
	}
	// each step: its warnings, then its error or what it wrote (how: where)
	step := func(warnings, wrote []string, how string, err error) bool {
		for _, w := range warnings {
			fmt.Fprintf(stderr, "ews cluster restore: warning: %s\n", w)
		}
		if err != nil {
			fmt.Fprintf(stderr, "ews cluster restore: %v\n", err)
			return false
		}
		for _, p := range wrote {
			fmt.Fprintf(stdout, "ews: wrote %s%s\n", p, how)
		}
		return true
	}
	res, err := backup.WriteCard(a, *board, *out)
	if *root != "" && a.Bundle != nil {
		res.Warnings = slices.DeleteFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--root") })
	}
	if !step(res.Warnings, res.Wrote, "", err) {
		return exitError
	}
	if *root != "" && a.Bundle != nil {
		sec, err := backup.WriteSecrets(a, *board, *root)
		if !step(nil, sec.Wrote, " (mode 0600, the root partition)", err) {
			return exitError
		}
	}
	switch {
	case stores && *root != "":
		st, err := backup.WriteStores(a, *board, *root)
		if !step(st.Warnings, st.Wrote, " (the root partition)", err) {
			return exitError
		}
	case stores:
		fmt.Fprintln(stderr, "ews cluster restore: warning: the backup's configuration and users stores are not written without --root (a board joining a running cluster takes them from its peers; `ews cluster restore --url` puts them back on one)")
	}
	return exitOK
}

// restoreStores is `ews cluster restore --url`: the backup's stores back
// on a running cluster.
func restoreStores(a backup.Archive, url string, cr creds, stdout, stderr io.Writer) int {
	client, tok := cr.client, cr.token
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := backup.RestoreStores(ctx, a, backup.RestoreOptions{URL: boardURL(url), Token: tok, Client: client, Check: checkStoreText})
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "ews cluster restore: %s\n", n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews cluster restore: %v%s\n", err, tlsHint(err))
		return exitError
	}
	if res.ConfigVersion > 0 {
		fmt.Fprintf(stdout, "ews: the configuration store is at version %d, the backup's document\n", res.ConfigVersion)
	}
	if res.UsersVersion > 0 {
		fmt.Fprintf(stdout, "ews: the users store is at version %d, the backup's %d users\n", res.UsersVersion, usersIn(a))
	}
	return exitOK
}
