package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/tokenhash"
)

// NewAdmin makes an admin bundle: a fresh gossip key, token and session
// secret, a CA whose Name Constraints permit scope only, and a firmware
// signing key.
func NewAdmin(scope clustertls.Scope, now time.Time) (*Bundle, error) {
	b := &Bundle{Version: Version, Kind: KindAdmin, Key: random(32), Token: randomToken(), SessionSecret: random(32)}
	if err := b.renew(scope, now); err != nil {
		return nil, err
	}
	return b, nil
}

// renew gives b a new scoped CA and a new firmware signing key.
func (b *Bundle) renew(scope clustertls.Scope, now time.Time) error {
	cert, key, err := clustertls.NewScopedCA(now, scope)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	b.CACert, b.CAKey = base64.StdEncoding.EncodeToString(cert), base64.StdEncoding.EncodeToString(key)
	b.SignKey, b.VerifyKey = base64.StdEncoding.EncodeToString(priv.Seed()), base64.StdEncoding.EncodeToString(pub)
	return nil
}

// Migrate turns a version 1 or 2 bundle (one file on every board, CA key
// included) into an admin bundle with the same gossip key, token, session
// secret and users, a new CA constrained to scope and a firmware signing
// key. The old CA is dropped: its key is on every board it was installed
// on, so nothing it signed should be trusted any more.
func Migrate(old *Bundle, scope clustertls.Scope, now time.Time) (*Bundle, error) {
	if old.Version == Version {
		return nil, fmt.Errorf("bundle: already a version %d %s bundle: nothing to migrate", Version, old.Kind)
	}
	b := &Bundle{Version: Version, Kind: KindAdmin, Key: old.Key, Token: old.Token, SessionSecret: old.SessionSecret, Users: append([]string(nil), old.Users...)}
	if b.SessionSecret == "" {
		b.SessionSecret = random(32)
	}
	if err := b.renew(scope, now); err != nil {
		return nil, err
	}
	return b, nil
}

// validateV3 checks what a version 3 bundle of its kind must and must not hold.
func (b *Bundle) validateV3() error {
	if b.CACert == "" {
		return errors.New("ca_cert: a version 3 bundle needs the cluster's CA certificate")
	}
	if _, err := b.Verifier(); err != nil {
		return err
	}
	switch b.Kind {
	case KindAdmin:
		switch {
		case b.Name != "" || b.Cert != "" || b.CertKey != "":
			return errors.New("kind: an admin bundle holds no board's name, cert or cert_key")
		case b.CAKey == "":
			return errors.New("ca_key: an admin bundle needs the CA's key")
		case b.SignKey == "":
			return errors.New("sign_key: an admin bundle needs the firmware signing key")
		}
		priv, err := b.Signer()
		if err != nil {
			return err
		}
		pub, _ := b.Verifier()
		if !bytes.Equal(priv.Public().(ed25519.PublicKey), pub) {
			return errors.New("verify_key does not belong to sign_key")
		}
		if _, err := b.CA(); err != nil {
			return err
		}
	case KindBoard:
		switch {
		case b.CAKey != "":
			return errors.New("ca_key: a board bundle must not hold the CA's key (it is the admin's)")
		case b.SignKey != "":
			return errors.New("sign_key: a board bundle must not hold the firmware signing key (it is the admin's)")
		case b.Name == "":
			return errors.New("name: a board bundle names its board")
		case b.Cert == "" || b.CertKey == "":
			return errors.New("cert: a board bundle needs the board's cert and cert_key")
		}
		if _, err := b.CA(); err != nil {
			return err
		}
		if _, err := b.boardCert(time.Time{}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("kind: %q: want %q or %q", b.Kind, KindAdmin, KindBoard)
	}
	return nil
}

// Signer is the admin bundle's firmware signing key.
func (b *Bundle) Signer() (ed25519.PrivateKey, error) {
	seed, err := base64.StdEncoding.DecodeString(b.SignKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("sign_key: want base64 of a %d-byte ed25519 seed", ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Verifier is the key boards check firmware signatures with; nil, nil
// for bundles older than version 3 (they have none).
func (b *Bundle) Verifier() (ed25519.PublicKey, error) {
	if b.Version < Version {
		return nil, nil
	}
	pub, err := base64.StdEncoding.DecodeString(b.VerifyKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("verify_key: want base64 of a %d-byte ed25519 public key", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(pub), nil
}

// IsAdmin reports whether b is an admin bundle (version 3, kind admin).
func (b *Bundle) IsAdmin() bool { return b.Version == Version && b.Kind == KindAdmin }

// IsBoard reports whether b is a board bundle (version 3, kind board).
func (b *Bundle) IsBoard() bool { return b.Version == Version && b.Kind == KindBoard }

// NeedAdmin is nil for an admin bundle, else an error naming path and
// what it is instead.
func (b *Bundle) NeedAdmin(path string) error {
	switch {
	case b.IsAdmin():
		return nil
	case b.IsBoard():
		return fmt.Errorf("bundle: %s is board %s's bundle, not the admin bundle: it holds no CA key; give the file `ews cluster init` wrote", path, b.Name)
	default:
		return fmt.Errorf("bundle: %s is a version %d bundle: make it an admin bundle first with `ews cluster migrate %s --out ADMIN`", path, b.Version, path)
	}
}

// NeedBoard is nil for a bundle a board may hold (a board bundle, or a
// version 1 or 2 bundle until the cluster is migrated), else an error
// naming path.
func (b *Bundle) NeedBoard(path string) error {
	if b.IsAdmin() {
		return fmt.Errorf("bundle: %s is the admin bundle (it holds the CA key and the firmware signing key): it never goes on a board; mint this board's own with `ews cluster board NAME --bundle %s --out FILE`", path, path)
	}
	return nil
}

// Board mints board name's bundle from the admin bundle b: the gossip
// key, the hash of the admin's token (never the token), the session secret, the CA certificate (not its key),
// a certificate for name with hosts as further SANs, and the firmware
// verify key (not the signing key).
func (b *Bundle) Board(name string, hosts []string, now time.Time) (*Bundle, error) {
	if !b.IsAdmin() {
		return nil, b.NeedAdmin("the bundle")
	}
	if name == "" || strings.ContainsAny(name, " \t\r\n/") {
		return nil, fmt.Errorf("bundle: %q is not a board name", name)
	}
	ca, err := b.CA()
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	cert, key, err := ca.IssueBoard(name, hosts, now)
	if err != nil {
		return nil, fmt.Errorf("bundle: board %s: %w", name, err)
	}
	hash, err := b.adminTokenHash()
	if err != nil {
		return nil, err
	}
	// no token: a card gives one board, never the admin (docs/NOTES.md "Security")
	out := &Bundle{Version: Version, Kind: KindBoard, Name: name, Key: b.Key, StoreKey: b.StoreKey, Generation: b.Generation, AdminTokenHash: hash, AdminTokenKey: b.adminTokenKey(),
		SessionSecret: b.SessionSecret, Users: append([]string(nil), b.Users...), CACert: b.CACert,
		Cert: base64.StdEncoding.EncodeToString(cert), CertKey: base64.StdEncoding.EncodeToString(key),
		VerifyKey: b.VerifyKey}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("bundle: minted board bundle: %w", err)
	}
	return out, nil
}

// BoardCert is a board bundle's certificate, checked against its CA for
// board name at now: it chains, names name, and is valid now.
func (b *Bundle) BoardCert(name string, now time.Time) (tls.Certificate, error) {
	if !b.IsBoard() {
		return tls.Certificate{}, errors.New("cert: not a board bundle")
	}
	if b.Name != name {
		return tls.Certificate{}, fmt.Errorf("name: this is board %q's bundle, and this board is %q: mint one for it (ews cluster board %s)", b.Name, name, name)
	}
	return b.boardCert(now)
}

// boardCert checks the certificate against the CA; a zero now skips the
// validity window (Validate: the clock is the running board's business).
func (b *Bundle) boardCert(now time.Time) (tls.Certificate, error) {
	ca, err := b.CA()
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := base64.StdEncoding.DecodeString(b.Cert)
	if err != nil {
		return tls.Certificate{}, errors.New("cert: not base64")
	}
	key, err := base64.StdEncoding.DecodeString(b.CertKey)
	if err != nil {
		return tls.Certificate{}, errors.New("cert_key: not base64")
	}
	at := now
	if at.IsZero() {
		at = ca.Cert.NotBefore.Add(time.Second)
		if c, err := parseNotBefore(cert); err == nil && c.After(at) {
			at = c.Add(time.Second)
		}
	}
	tc, err := ca.Board(cert, key, b.Name, at)
	if err != nil {
		return tls.Certificate{}, errors.New(strings.TrimPrefix(err.Error(), "clustertls: "))
	}
	return tc, nil
}

func parseNotBefore(der []byte) (time.Time, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return time.Time{}, err
	}
	return c.NotBefore, nil
}

// adminTokenHash is base64 of what the users store keeps of b's token
// under the store's secret (Store: the first gossip key, kept across
// rotations); "" when b has no token.
func (b *Bundle) adminTokenHash() (string, error) {
	if b.Token == "" {
		return "", nil
	}
	key := b.Store()
	if key == nil {
		return "", errors.New("bundle: key: not base64")
	}
	h := tokenhash.Sum(key, b.Token)
	return base64.StdEncoding.EncodeToString(h[:]), nil
}

// adminTokenKey is the base64 public key Token makes; "" without a token.
func (b *Bundle) adminTokenKey() string {
	if b.Token == "" {
		return ""
	}
	return base64.StdEncoding.EncodeToString(tokenhash.SigningKey(b.Token).Public().(ed25519.PublicKey))
}

// AdminKey is the decoded admin_token_key; nil when there is none.
func (b *Bundle) AdminKey() []byte {
	k, err := base64.StdEncoding.DecodeString(b.AdminTokenKey)
	if err != nil || len(k) != 32 {
		return nil
	}
	return k
}

// AdminSeed is the decoded admin_token_hash; nil when there is none.
func (b *Bundle) AdminSeed() []byte {
	h, err := base64.StdEncoding.DecodeString(b.AdminTokenHash)
	if err != nil || len(h) != 32 {
		return nil
	}
	return h
}
