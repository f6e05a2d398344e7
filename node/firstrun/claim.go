package firstrun

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/enrol"
)

// ClaimFile is the name of the file on the boot partition that holds the
// claim code (and the first-run page's certificate fingerprint) until the
// board is claimed.
const ClaimFile = "ews-claim.txt"

// A claim code is drawn, typed back and shown as an enrolment code is
// (internal/enrol): 16 symbols of Crockford's base32, 80 bits, four groups
// of four.

// newClaim draws a claim code from crypto/rand, normalised (no dashes).
func newClaim() (string, error) {
	c, err := enrol.NewCode()
	if err != nil {
		return "", fmt.Errorf("firstrun: claim code: %w", err)
	}
	return c, nil
}

// normaliseClaim is what a person typed as the code compares.
func normaliseClaim(s string) string { return enrol.Normalise(s) }

// validClaim says whether c (normalised) is a code newClaim could draw.
func validClaim(c string) bool { return enrol.Valid(c) }

// claimMatches compares what was typed with the code in constant time
// (for codes of the same length, which every valid guess is).
func claimMatches(code, typed string) bool {
	return subtle.ConstantTimeCompare([]byte(code), []byte(normaliseClaim(typed))) == 1
}

// showClaim is the code as printed: four groups of four.
func showClaim(c string) string { return enrol.Show(c) }

// readClaim returns the code of the claim file at path, "" when there is
// none or it holds no valid code (a new one is drawn then).
func readClaim(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("firstrun: read %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "claim" {
			continue
		}
		q, err := strconv.Unquote(strings.TrimSpace(v))
		if err != nil {
			return "", nil
		}
		if c := normaliseClaim(q); validClaim(c) {
			return c, nil
		}
		return "", nil
	}
	return "", nil
}

// claimText is the claim file's content.
func claimText(code, fingerprint, httpsURL string) []byte {
	var b strings.Builder
	b.WriteString("# ews: this board's claim code. The first-run page asks for it to start or join a cluster;\n")
	b.WriteString("# whoever holds this card (or sees the console) claims the board. Gone once the board is set up.\n")
	fmt.Fprintf(&b, "claim = %s\n", strconv.Quote(showClaim(code)))
	if fingerprint != "" {
		b.WriteString("# The page is served over HTTPS with a self-signed certificate, made at this start: check that\n")
		b.WriteString("# the browser shows this SHA-256 fingerprint before you type the code.\n")
		fmt.Fprintf(&b, "fingerprint = %s\n", strconv.Quote(fingerprint))
		fmt.Fprintf(&b, "url = %s\n", strconv.Quote(httpsURL))
	}
	return []byte(b.String())
}

// writeClaim writes the claim file through a temp file and a rename, mode
// 0600 where the file system keeps modes (a FAT boot partition does not:
// anyone holding the card reads it, which is the point).
func writeClaim(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("firstrun: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename: a no-op
	_ = tmp.Chmod(0o600)        // refused on FAT: the mount's mode stands
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("firstrun: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("firstrun: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("firstrun: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("firstrun: write %s: %w", path, err)
	}
	return nil
}
