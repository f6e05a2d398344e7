// Package users is the cluster's accounts: users, roles and device rights, their credentials, and the replicated store that holds them.
package users

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/durable"
)

// Roles.
const (
	RoleViewer   = "viewer"   // reads devices, the cluster, history
	RoleOperator = "operator" // device actions and CGI, on the devices its patterns match
	RoleAdmin    = "admin"    // everything: users, firmware, restart, upgrades, rules
)

// AdminName is the first admin, whose token is the admin bundle's (seed.go).
const AdminName = "admin"

// User is one account as the store keeps it. Token and Password are
// hashes (kdf.go), never the secrets.
type User struct {
	Name     string   `json:"name"`
	Role     string   `json:"role"`
	Devices  []string `json:"devices,omitempty"`  // operator: path.Match patterns
	Token    []byte   `json:"token,omitempty"`    // HMAC-SHA256 of the token
	Password string   `json:"password,omitempty"` // argon2id PHC string
	// Gen is the store version that last changed the user's credentials
	// or rights (creation, rotation, password, role): a session carries
	// it and ends when it differs. A version, not a per-user counter, so a
	// user deleted and created again under the same name never matches an
	// old session.
	Gen     uint64    `json:"gen"`
	Created time.Time `json:"created"`
	// TokenKey and PassKey are the public halves of the keys the user's
	// token and password make (sign.go): the log takes a write of this
	// store or the configuration only when one of them verifies its
	// signature. PassSalt is the password key's argon2id salt.
	TokenKey []byte `json:"token_key,omitempty"`
	PassKey  []byte `json:"pass_key,omitempty"`
	PassSalt []byte `json:"pass_salt,omitempty"`
	// Grant is an admin's signature over an admin's name, role and keys
	// (grant.go): how a board taking the store from a snapshot traces an
	// admin it has not seen to one it knows.
	Grant []byte `json:"grant,omitempty"`
}

// Doc is one version of the whole store, as the cluster's durable log
// commits it (node/durable, document "users") and every board keeps it.
type Doc struct {
	Version uint64 `json:"version"` // +1 per change
	// Epoch was the writing master's epoch, which broke ties between the
	// versions two sides of a split wrote; the log never forks, so it is
	// only carried (boards of the previous build still compare it).
	Epoch uint64 `json:"epoch"`
	Users []User `json:"users"`
}

// Newer reports whether d is newer than o (Adopt: the stores of the
// previous build, before the log holds one).
func (d *Doc) Newer(o *Doc) bool {
	if d.Version != o.Version {
		return d.Version > o.Version
	}
	return d.Epoch > o.Epoch
}

// Principal is who a request's credentials name: the verdict of a check,
// shared and never modified.
type Principal struct {
	Name    string   `json:"user"`
	Role    string   `json:"role"`
	Devices []string `json:"devices,omitempty"`
	Gen     uint64   `json:"-"`
}

// root is the principal of a board alone's own token (and of auth = "none").
var root = &Principal{Name: AdminName, Role: RoleAdmin}

// Root is the principal of a board alone's own token: admin.
func Root() *Principal { return root }

// Options configure New.
type Options struct {
	// Secret is the cluster key (or what stands for it): tokens are
	// hashed and the replicated store sealed under keys derived from it.
	// Nil: a random one of this process (a board alone).
	Secret []byte
	// Path is the file the store is kept in across restarts; "" keeps it
	// in memory only.
	Path string
	// State is the cluster's durable state, where every write is
	// committed (docs/NOTES.md "Durable state on Raft"); nil: a board alone
	// (durable.NewAlone).
	State durable.State
	// OnChange is told each new version this board takes, sealed (Seal),
	// to publish on its stream for boards of the previous build, which
	// take the store from there. Must be quick.
	OnChange func(sealed string)
	// OnRevoke is told the users whose old credentials a change ended.
	OnRevoke func(name string)
	// Devices lists the cluster's device names (for the warning of a
	// pattern that matches none). Optional.
	Devices func() []string
	// MinPassword is the shortest password accepted; default 10.
	MinPassword int
	Logger      *slog.Logger
	Now         func() time.Time
}

// index is a Doc made fast to check against; rebuilt per version.
type index struct {
	doc     *Doc
	durable uint64 // the log's version of the document doc is; 0: not in the log yet
	byToken map[tokenHash]*Principal
	byName  map[string]*Principal
	sealed  string
	signed  bool // signedStore(doc)
}

// Store holds the current Doc of this board. Safe for concurrent use;
// checks take no lock.
type Store struct {
	opts     Options
	cur      atomic.Pointer[index]
	mu       sync.Mutex // installs: the log's watcher, Adopt
	tokenMAC sync.Pool
	sealKey  []byte
	keptErr  error // KeptError

	writes    durable.Writes       // writes that lost a race try again in turn (mutate)
	regMu     sync.Mutex           // one key registration at a time (register.go)
	regFailed map[string]time.Time // user -> when a registration failed; under regMu
}

// New returns the store, loaded from opts.Path when it holds a valid
// Doc, else the first version: the admin alone.
func New(opts Options) (*Store, error) {
	durable.FillDefaults(&opts.Logger, &opts.Now, &opts.State)
	if opts.MinPassword <= 0 {
		opts.MinPassword = 10
	}
	if len(opts.Secret) == 0 {
		opts.Secret = deriveKey(nil, "random")
	}
	tk := tokenhash.Key(opts.Secret) // one definition: the admin's tool hashes admin_token_hash with it
	s := &Store{opts: opts, sealKey: deriveKey(opts.Secret, "seal")}
	s.tokenMAC.New = func() any { return newMAC(tk) }
	doc := &Doc{Users: []User{{Name: AdminName, Role: RoleAdmin}}}
	if opts.Path != "" {
		d, err := readKept(opts.Path)
		switch {
		case err != nil:
			// never a reason not to start (issue 45): the log's copy,
			// from the peers, replaces the first version below
			s.keptErr = err
		case d != nil:
			doc = d
		}
	}
	s.cur.Store(s.indexOf(doc, 0))
	opts.State.Watch(durable.KindUsers, s.committed)
	return s, nil
}

// readKept reads the kept store at path: nil, nil when there is none.
func readKept(path string) (*Doc, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("users: read %q: %w", path, err)
	}
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("users: read %q: %w", path, err)
	}
	if err := d.valid(); err != nil {
		return nil, fmt.Errorf("users: read %q: %w", path, err)
	}
	return &d, nil
}

// KeptError is why the kept file (Options.Path) could not be taken at
// New, or nil. The store then starts at its first version (the admin
// alone), which imports nothing into the log, and takes the cluster's
// version from the log as the board joins.
func (s *Store) KeptError() error { return s.keptErr }

func (s *Store) indexOf(d *Doc, durable uint64) *index {
	ix := &index{doc: d, durable: durable, byToken: map[tokenHash]*Principal{}, byName: map[string]*Principal{}}
	for _, u := range d.Users {
		p := &Principal{Name: u.Name, Role: u.Role, Devices: u.Devices, Gen: u.Gen}
		ix.byName[u.Name] = p
		if len(u.Token) == len(tokenHash{}) {
			ix.byToken[tokenHash(u.Token)] = p
		}
	}
	ix.sealed = s.seal(d)
	ix.signed = signedStore(d)
	return ix
}

// Doc is the current version (do not modify it).
func (s *Store) Doc() *Doc { return s.cur.Load().doc }

// Version is the current version number.
func (s *Store) Version() uint64 { return s.cur.Load().doc.Version }

// Sealed is the current version, sealed for the other boards.
func (s *Store) Sealed() string { return s.cur.Load().sealed }

// Token returns the principal of a token, or nil.
func (s *Store) Token(tok string) *Principal {
	if tok == "" { // any length: user admin's may be a token of an earlier build (seed.go), e.g. the demo's
		return nil
	}
	return s.cur.Load().byToken[s.hashToken(tok)]
}

// Session returns the principal of a session of user name at gen, or nil
// when the user is gone or its credentials changed since.
func (s *Store) Session(name string, gen uint64) *Principal {
	if name == "" {
		return root
	}
	p := s.cur.Load().byName[name]
	if p == nil || p.Gen != gen {
		return nil
	}
	return p
}

// User returns the principal of user name, or nil.
func (s *Store) User(name string) *Principal { return s.cur.Load().byName[name] }

// kdfSlots bounds the argon2id runs at once (16 MiB each): logins past it
// wait, so a burst of them from many addresses cannot take a board's memory.
var kdfSlots = make(chan struct{}, 2)

// Password returns the principal whose password pw is, or nil. It costs
// one argon2id run, also for an unknown user.
func (s *Store) Password(name, pw string) *Principal {
	if len(pw) > MaxPassword {
		return nil
	}
	kdfSlots <- struct{}{}
	defer func() { <-kdfSlots }()
	ix := s.cur.Load()
	enc := dummyHash()
	var known *Principal
	for _, u := range ix.doc.Users {
		if u.Name == name && u.Password != "" {
			enc, known = u.Password, ix.byName[name]
		}
	}
	ok, err := checkPassword(enc, pw)
	if err != nil || !ok || known == nil {
		return nil
	}
	return known
}

var dummy = sync.OnceValue(func() string { return hashPassword("ews-dummy-password") })

func dummyHash() string { return dummy() }

// committed installs a version the log committed (durable.State.Watch):
// in log order on every board, whatever its number, so all boards hold
// the same. A version this board cannot open (another cluster key) is
// logged and skipped.
func (s *Store) committed(doc durable.Document) {
	d, err := s.Open(string(doc.Data))
	if err != nil {
		s.opts.Logger.Error("users: a committed version does not open here", "version", doc.Version, "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.install(s.cur.Load().doc, d, doc.Version); err != nil {
		s.opts.Logger.Error("users: keep the committed version", "err", err)
	}
}

// Adopt takes d, a store of the previous build's replication, when it is
// newer than this board's version and the log holds no store yet (so
// Import proposes the newest one this board heard); it persists it and
// tells OnChange, and reports whether it took it. Once the log holds the
// store, only the log changes it.
func (s *Store) Adopt(d *Doc) (bool, error) {
	if err := d.valid(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	if old.durable > 0 || s.opts.State.Get(durable.KindUsers).Version > 0 || !d.Newer(old.doc) {
		return false, nil
	}
	return true, s.install(old.doc, d, 0)
}

// Import proposes this board's store (users.json, kept by the previous
// build, or mirrored since from a board still running it) as the log's
// first version of the store, once: when the log holds none and this
// board has one that was ever written. Boards of a cluster import at
// once; the first commits, the others' expected version 0 is gone and
// they take the committed one. nil once the log holds the store;
// ErrNothingToImport while neither it nor this board has one (a board of
// the previous build may still send one); another error (no quorum yet)
// means try again.
func (s *Store) Import(ctx context.Context) error {
	ix := s.cur.Load()
	if s.opts.State.Get(durable.KindUsers).Version > 0 || ix.durable > 0 {
		return nil
	}
	if ix.doc.Version == 0 {
		return ErrNothingToImport
	}
	_, err := s.opts.State.Apply(ctx, durable.KindUsers, []byte(ix.sealed), 0)
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		return nil
	}
	if err == nil {
		s.opts.Logger.Info("users: the store is in the durable log now", "version", ix.doc.Version, "users", len(ix.doc.Users))
	}
	return err
}

// install makes d current, the log's version dv of the store; s.mu is
// held.
func (s *Store) install(old, d *Doc, dv uint64) error {
	if err := s.save(d); err != nil {
		return err
	}
	ix := s.indexOf(d, dv)
	s.cur.Store(ix)
	if s.opts.OnRevoke != nil {
		for _, name := range ended(old, d) {
			s.opts.OnRevoke(name)
		}
	}
	if s.opts.OnChange != nil {
		s.opts.OnChange(ix.sealed)
	}
	return nil
}

// ended names the users of old whose credentials d ends.
func ended(old, d *Doc) []string {
	var out []string
	for _, u := range old.Users {
		i := slices.IndexFunc(d.Users, func(n User) bool { return n.Name == u.Name })
		if i < 0 || d.Users[i].Gen != u.Gen || !bytes.Equal(d.Users[i].Token, u.Token) {
			out = append(out, u.Name)
		}
	}
	return out
}

// save writes d to opts.Path (temp file, then rename).
func (s *Store) save(d *Doc) error {
	if s.opts.Path == "" {
		return nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("users: encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.opts.Path), 0o700); err != nil {
		return fmt.Errorf("users: save: %w", err)
	}
	tmp := s.opts.Path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("users: save: %w", err)
	}
	if err := os.Rename(tmp, s.opts.Path); err != nil {
		return fmt.Errorf("users: save: %w", err)
	}
	return nil
}

// errMoved: the store kept moving under a write (other boards' writes
// won each of its durable.MaxConflicts tries).
var errMoved = errors.New("users: the store changed during the write; try again")

// ErrNothingToImport: see Import.
var ErrNothingToImport = errors.New("users: nothing to import yet")

// mutate applies f to a copy of the current Doc and commits it as the
// next version in the durable log; it returns once committed and
// installed here. Any board may write: the log forwards to its leader,
// and a side of the network without a majority of its voters refuses
// (*durable.NoQuorumError). When another write committed first, f runs
// again on the newer version, while ctx lasts (at most
// durable.MaxConflicts times: errMoved); writes of this board that lost a
// race try again one at a time (durable.Writes), so they do not all lose
// again to each other. When f refuses (a user
// that exists, or none by that name), the refusal was decided on this
// board's copy, which may lag the log (a board that was paused, or one
// that has not applied the last write yet): the copy is brought up to the
// log first (barrier) and f runs again, so a refusal is one the log agrees
// with.
func (s *Store) mutate(ctx context.Context, f func(d *Doc) error) error {
	confirmed := false
	err := s.writes.Do(ctx, func() error {
		for {
			ix := s.cur.Load()
			old := ix.doc
			d := &Doc{Version: old.Version + 1, Epoch: old.Epoch, Users: slices.Clone(old.Users)}
			if err := f(d); err != nil {
				var ae *apiError
				if confirmed || !errors.As(err, &ae) {
					return err
				}
				if err := s.barrier(ctx, ix); err != nil {
					return err
				}
				confirmed = true
				continue
			}
			grantAdmins(durable.SignerOf(ctx), old, d)
			_, err := s.opts.State.Apply(ctx, durable.KindUsers, []byte(s.seal(d)), ix.durable)
			return err
		}
	})
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		return errMoved
	}
	return err
}

// barrier brings this board's copy up to the log as it is now: a write
// that cannot match (it expects the largest version there is) is ordered
// in the log and refused there as a conflict, and Apply returns once this
// board applied the log up to it. The log takes no new version. Found by
// the history checker (docs/NOTES.md "Linearizability and the
// simulator"): a paused master, back, answered 404 for a user created
// while it slept. A side without a majority cannot confirm: its error
// (503 no quorum) is the answer.
func (s *Store) barrier(ctx context.Context, ix *index) error {
	_, err := s.opts.State.Apply(ctx, durable.KindUsers, []byte(ix.sealed), math.MaxUint64)
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		return nil
	}
	if err == nil {
		return errors.New("users: the log took a barrier as a write")
	}
	return err
}

// valid checks a Doc read from a file or another board.
func (d *Doc) valid() error {
	seen := map[string]bool{}
	admins := 0
	for _, u := range d.Users {
		if err := validName(u.Name); err != nil {
			return err
		}
		if seen[u.Name] {
			return fmt.Errorf("users: duplicate user %q", u.Name)
		}
		seen[u.Name] = true
		if !validRole(u.Role) {
			return fmt.Errorf("users: user %q: unknown role %q", u.Name, u.Role)
		}
		if u.Password != "" {
			if _, err := parseHash(u.Password); err != nil {
				return fmt.Errorf("users: user %q: password: %w", u.Name, err)
			}
		}
		if u.Role == RoleAdmin {
			admins++
		}
	}
	if admins == 0 {
		return fmt.Errorf("users: no admin")
	}
	return nil
}
