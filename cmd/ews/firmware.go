package main

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"os"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/node/firmware"
)

const firmwareHelp = `sign --bundle ADMIN BINARY [--out FILE]: append a signature by the cluster's firmware key (in the admin bundle) to BINARY, in place (atomically) or into FILE. Signing a signed image replaces its signature. The signed image is one file: upload it as it is (UI, ews upgrade, /api/board/firmware); it runs as it is.
verify --bundle BUNDLE IMAGE: check IMAGE's signature against the bundle's verify key (an admin or a board bundle), as a board does.`

func cmdFirmware(args []string, stdout, stderr io.Writer) int {
	return subcommand("firmware", "sign --bundle ADMIN BINARY [--out FILE] | verify --bundle BUNDLE IMAGE", firmwareHelp,
		map[string]runner{"sign": firmwareSign, "verify": firmwareVerify}, args, stdout, stderr)
}

func firmwareSign(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("firmware sign", "--bundle ADMIN BINARY [--out FILE]", "Sign BINARY with the admin bundle's firmware key (a trailer appended; in place unless --out).", stderr)
	admin := fs.String("bundle", "", "the admin bundle (ews cluster init)")
	out := fs.String("out", "", "write the signed image here (default: BINARY itself)")
	if code, ok := parse(fs, interleave(args, nil)); !ok {
		return code
	}
	if fs.NArg() != 1 || *admin == "" {
		fmt.Fprintln(stderr, "ews firmware sign: want --bundle ADMIN and one BINARY")
		return exitUsage
	}
	a, err := readAdmin(*admin)
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware sign: %v\n", err)
		return exitError
	}
	key, err := a.Signer()
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware sign: %s: %v\n", *admin, err)
		return exitError
	}
	in := fs.Arg(0)
	data, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware sign: %v\n", err)
		return exitError
	}
	if len(data) < 4 || string(data[:4]) != "\x7fELF" {
		fmt.Fprintf(stderr, "ews firmware sign: %s is not an ELF executable: only ews builds are signed\n", in)
		return exitError
	}
	dst := *out
	if dst == "" {
		dst = in
	}
	mode := os.FileMode(0o755)
	if fi, err := os.Stat(in); err == nil {
		mode = fi.Mode().Perm()
	}
	signed := firmware.Sign(data, key)
	if err := bundle.WriteFile(dst, signed, mode); err != nil {
		fmt.Fprintf(stderr, "ews firmware sign: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "ews: signed %s (key %x): %s\n", in, firmware.KeyID(key.Public().(ed25519.PublicKey)), dst)
	return exitOK
}

func firmwareVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("firmware verify", "--bundle BUNDLE IMAGE", "Check IMAGE's signature against the bundle's firmware verify key.", stderr)
	path := fs.String("bundle", "", "an admin or board bundle (version 3)")
	if code, ok := parse(fs, interleave(args, nil)); !ok {
		return code
	}
	if fs.NArg() != 1 || *path == "" {
		fmt.Fprintln(stderr, "ews firmware verify: want --bundle BUNDLE and one IMAGE")
		return exitUsage
	}
	b, err := bundle.Read(*path)
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware verify: %v\n", err)
		return exitError
	}
	pub, err := b.Verifier()
	if err == nil && pub == nil {
		err = fmt.Errorf("%s is a version %d bundle: it has no firmware key (ews cluster migrate)", *path, b.Version)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware verify: %v\n", err)
		return exitError
	}
	n, err := firmware.VerifyFile(fs.Arg(0), pub)
	if err != nil {
		fmt.Fprintf(stderr, "ews firmware verify: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	fmt.Fprintf(stdout, "ews: %s: signed by this cluster's key (%d bytes of binary)\n", fs.Arg(0), n)
	return exitOK
}
