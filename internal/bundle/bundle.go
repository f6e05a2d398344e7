// Package bundle reads and writes the cluster secret bundle: what every board of one cluster must share.
package bundle

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/pelletier/go-toml/v2"
)

// Version is the bundle format this build writes: an admin bundle (Kind
// KindAdmin: the CA key and the firmware signing key, never on a board)
// or a board bundle minted from it (KindBoard). It reads VersionNoCA and
// VersionSharedCA too (`ews cluster migrate` turns them into an admin
// bundle).
const Version = 3

// VersionSharedCA is the second format: one bundle with the CA key,
// installed on every board, each of which issued its own certificate.
// Boards still run from it (and warn) until the cluster is migrated.
const VersionSharedCA = 2

// Kinds of a version 3 bundle.
const (
	KindAdmin = "admin"
	KindBoard = "board"
)

// MaxGeneration is the last generation a bundle holds: a TOML integer is
// signed 64-bit, so a rotation never goes past it (node/rotate refuses
// one that would).
const MaxGeneration = math.MaxInt64

// VersionNoCA is the first format: key, token, session secret and users.
const VersionNoCA = 1

// DefaultName is the bundle's file name, in /etc/ews and where
// `ews cluster init` writes it.
const DefaultName = "cluster.bundle"

// Bundle is the cluster's shared secrets. New material is added as new
// fields with a new Version; a reader refuses fields it does not know, so
// an old build never silently drops a secret.
type Bundle struct {
	Version int    `toml:"version"`
	Kind    string `toml:"kind,omitempty"` // version 3: KindAdmin or KindBoard
	Name    string `toml:"name,omitempty"` // a board bundle's board
	Key     string `toml:"key"`            // base64 AES-256 gossip key (cluster.key)
	// StoreKey is base64 of the users store's secret (tokens are hashed
	// and the store sealed under keys derived from it; internal/tokenhash)
	// when it is no longer Key: `ews cluster rotate` gives the cluster a
	// new gossip key and keeps this one, so every user's token stays
	// valid. "": Key (a cluster never rotated).
	StoreKey string `toml:"store_key,omitempty"`
	// Generation counts the rotations of the cluster's secrets this
	// bundle's Key and SessionSecret are of (0: those of `ews cluster
	// init`); a board prefers the secrets it keeps under state_dir when
	// they are of a later generation.
	Generation uint64 `toml:"generation,omitempty"`
	// Token is the first admin's token (admin bundles; user admin of the
	// users store, docs/NOTES.md "Security"). Board bundles minted by this
	// build carry none (a card is no admin): AdminTokenHash instead.
	// Version 1 and 2 bundles, and board bundles minted before, carry it
	// on every board.
	Token string `toml:"token,omitempty"`
	// AdminTokenHash (board bundles) is base64 of what the users store
	// keeps of Token (internal/tokenhash, under the gossip key): the board
	// seeds user admin with it, and nobody gets the token back from it.
	AdminTokenHash string `toml:"admin_token_hash,omitempty"`
	// AdminTokenKey (board bundles) is base64 of the public key Token makes
	// (internal/tokenhash.SigningKey): the board seeds user admin's key with
	// it, so the users store takes only writes its people signed from the
	// first second (docs/DESIGN.md, Trust). Bundles minted before carry none.
	AdminTokenKey string `toml:"admin_token_key,omitempty"`
	// SessionSecret is base64 of 32 random bytes: the key of session
	// cookies is derived from it (node/auth), never from the token.
	SessionSecret string   `toml:"session_secret"`
	Users         []string `toml:"users,omitempty"` // basic users, "name:bcrypt-hash"
	// CACert and CAKey (version 2) are the cluster's TLS CA, ECDSA P-256:
	// base64 of the certificate's DER and of the PKCS #8 DER key (PEM
	// without its armour, so the bundle stays one line a field, as the
	// flash scripts read it). Every board issues its own certificate from
	// them at start; clients trust the certificate (`ews cluster ca`
	// prints it as PEM).
	CACert string `toml:"ca_cert,omitempty"`
	CAKey  string `toml:"ca_key,omitempty"` // versions 2 and 3 admin only
	// Cert and CertKey (board bundles) are this board's certificate and its
	// key, minted off the board by the admin: base64 DER, as ca_cert.
	Cert    string `toml:"cert,omitempty"`
	CertKey string `toml:"cert_key,omitempty"`
	// SignKey (admin only) is base64 of the ed25519 seed that signs
	// firmware (`ews firmware sign`); VerifyKey (both kinds) is base64 of
	// its public key: boards accept firmware signed by it and nothing else.
	SignKey   string `toml:"sign_key,omitempty"`
	VerifyKey string `toml:"verify_key,omitempty"`
}

// New is NewAdmin with no board named: its CA permits localhost and
// loopback only. Tests use it; `ews cluster init` names the boards.
func New() *Bundle {
	b, err := NewAdmin(clustertls.Scope{}, time.Now())
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return b
}

// CA is the bundle's cluster CA, with its key; nil when the bundle has
// none (version 1).
func (b *Bundle) CA() (*clustertls.CA, error) {
	if b.CACert == "" {
		return nil, nil
	}
	cert, err := base64.StdEncoding.DecodeString(b.CACert)
	if err != nil {
		return nil, errors.New("ca_cert: not base64")
	}
	key, err := base64.StdEncoding.DecodeString(b.CAKey)
	if err != nil {
		return nil, errors.New("ca_key: not base64")
	}
	ca, err := clustertls.ParseCA(cert, key)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "clustertls: "))
	}
	return ca, nil
}

// Store is the decoded secret of the users store: StoreKey, else Key;
// nil when neither decodes.
func (b *Bundle) Store() []byte {
	s := b.StoreKey
	if s == "" {
		s = b.Key
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(k) == 0 {
		return nil
	}
	return k
}

// Session is the decoded session secret; nil when the bundle has none.
func (b *Bundle) Session() []byte {
	s, err := base64.StdEncoding.DecodeString(b.SessionSecret)
	if err != nil || len(s) == 0 {
		return nil
	}
	return s
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.StdEncoding.EncodeToString(b)
}

// randomToken is 32 random bytes, URL-safe base64: easy to paste into the
// UI's login and a shell.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Validate checks every field; the error names the field.
func (b *Bundle) Validate() error {
	if b.Version < VersionNoCA || b.Version > Version {
		return fmt.Errorf("version %d: this build reads versions %d to %d", b.Version, VersionNoCA, Version)
	}
	k, err := base64.StdEncoding.DecodeString(b.Key)
	if err != nil || (len(k) != 16 && len(k) != 24 && len(k) != 32) {
		return errors.New("key: want base64 of 16, 24 or 32 bytes")
	}
	if b.StoreKey != "" {
		if k, err := base64.StdEncoding.DecodeString(b.StoreKey); err != nil || len(k) < 16 {
			return errors.New("store_key: want base64 of at least 16 bytes")
		}
	}
	if b.Generation > MaxGeneration {
		return fmt.Errorf("generation: %d is past %d, the last a bundle holds (a forged rotation?)", b.Generation, uint64(MaxGeneration))
	}
	if b.Token == "" && len(b.Users) == 0 && b.AdminTokenHash == "" {
		return errors.New("token: empty, and no users: the bundle holds no HTTP credentials")
	}
	if b.AdminTokenHash != "" {
		if h, err := base64.StdEncoding.DecodeString(b.AdminTokenHash); err != nil || len(h) != 32 {
			return errors.New("admin_token_hash: want base64 of 32 bytes")
		}
	}
	if b.AdminTokenKey != "" {
		if k, err := base64.StdEncoding.DecodeString(b.AdminTokenKey); err != nil || len(k) != 32 {
			return errors.New("admin_token_key: want base64 of 32 bytes")
		}
	}
	if strings.ContainsAny(b.Token, " \t\r\n") {
		return errors.New("token: has white space")
	}
	if b.SessionSecret != "" {
		if s, err := base64.StdEncoding.DecodeString(b.SessionSecret); err != nil || len(s) < 32 {
			return errors.New("session_secret: want base64 of at least 32 bytes")
		}
	}
	for i, u := range b.Users {
		if name, hash, ok := strings.Cut(u, ":"); !ok || name == "" || !strings.HasPrefix(hash, "$2") {
			return fmt.Errorf("users[%d]: want \"name:bcrypt-hash\"", i)
		}
	}
	if b.Version == Version {
		return b.validateV3()
	}
	switch {
	case b.Kind != "" || b.Name != "" || b.Cert != "" || b.CertKey != "" || b.SignKey != "" || b.VerifyKey != "":
		return fmt.Errorf("kind: a version %d bundle has no kind, name, cert, cert_key, sign_key or verify_key; write version = %d", b.Version, Version)
	case b.Version == VersionNoCA && (b.CACert != "" || b.CAKey != ""):
		return errors.New("ca_cert: a version 1 bundle has no CA; write version = 2")
	case b.Version == VersionSharedCA && (b.CACert == "" || b.CAKey == ""):
		return errors.New("ca_cert: a version 2 bundle needs ca_cert and ca_key")
	case b.CACert != "":
		if _, err := b.CA(); err != nil {
			return err
		}
	}
	return nil
}

// Equal reports whether a and b hold the same secrets.
func (b *Bundle) Equal(o *Bundle) bool {
	return b.Version == o.Version && b.Key == o.Key && b.StoreKey == o.StoreKey && b.Generation == o.Generation && b.Token == o.Token && b.AdminTokenHash == o.AdminTokenHash && b.AdminTokenKey == o.AdminTokenKey &&
		b.SessionSecret == o.SessionSecret && b.CACert == o.CACert && b.CAKey == o.CAKey &&
		b.Kind == o.Kind && b.Name == o.Name && b.Cert == o.Cert && b.CertKey == o.CertKey &&
		b.SignKey == o.SignKey && b.VerifyKey == o.VerifyKey &&
		strings.Join(b.Users, "\n") == strings.Join(o.Users, "\n")
}

// Marshal is the bundle file's text; an error when a field does not
// encode (a generation past MaxGeneration): never half a bundle.
func (b *Bundle) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	switch {
	case b.Kind == KindAdmin:
		buf.WriteString("# ews admin bundle: the cluster's CA key, firmware signing key and secrets.\n")
		buf.WriteString("# It NEVER goes on a board: keep it like a password (mode 0600), offline.\n")
		buf.WriteString("# Boards get their own bundle minted from it: `ews cluster board NAME`,\n")
		buf.WriteString("# `scripts/flash.sh --bundle FILE`, `scripts/deploy.sh --bundle FILE`,\n")
		buf.WriteString("# `ews cluster join FILE --name NAME`.\n")
	case b.Kind == KindBoard:
		buf.WriteString("# ews board bundle of board " + b.Name + ": the cluster's gossip key and\n")
		buf.WriteString("# credentials, this board's certificate and key, the firmware verify key.\n")
		buf.WriteString("# Keep it like a password (mode 0600) in /etc/ews/cluster.bundle.\n")
	default:
		buf.WriteString("# ews cluster bundle: the secrets every board of this cluster shares.\n")
		buf.WriteString("# Keep it like a password (mode 0600). `ews cluster migrate` turns it\n")
		buf.WriteString("# into an admin bundle whose CA key stays off the boards.\n")
	}
	if err := toml.NewEncoder(&buf).Encode(b); err != nil {
		return nil, fmt.Errorf("bundle: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Parse reads a bundle; errors name path and, where the parser knows it,
// the line of the problem. Unknown fields are errors.
func Parse(path string, data []byte) (*Bundle, error) {
	var b Bundle
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) && len(sm.Errors) > 0 {
			e := sm.Errors[0]
			line, _ := e.Position()
			return nil, fmt.Errorf("bundle: %s:%d: unknown field %q (this build reads version %d; a newer ews wrote it?)", path, line, strings.Join(e.Key(), "."), Version)
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, fmt.Errorf("bundle: %s:%d: %s", path, line, de.Error())
		}
		return nil, fmt.Errorf("bundle: %s: %w", path, err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("bundle: %s:%d: %w", path, lineOf(data, fieldOf(err)), err)
	}
	return &b, nil
}

// fieldOf is the field an error of Validate names ("key: ..." -> "key").
func fieldOf(err error) string {
	f, _, _ := strings.Cut(err.Error(), ":")
	f, _, _ = strings.Cut(f, "[")
	return strings.Fields(f + " x")[0]
}

// lineOf is the 1-based line where key is set, 1 when it is not.
func lineOf(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, key); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return i + 1
		}
	}
	return 1
}

// Read reads and parses the bundle at path.
func Read(path string) (*Bundle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return Parse(path, data)
}

// Write writes b to path with mode 0600, atomically and verified
// (writeBundle): on any error the file at path is as it was. An existing
// file is refused unless force.
func Write(path string, b *Bundle, force bool) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("bundle: %s exists: not overwriting it without --force (every board flashed from it would lose the cluster)", path)
		}
	}
	return writeBundle(path, b, -1, -1)
}
