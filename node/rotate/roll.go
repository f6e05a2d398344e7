package rotate

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// Options configure New.
type Options struct {
	Self  string        // this board's name
	State durable.State // the cluster's durable log
	// Saved is what the board starts with: the file Path (Load), else
	// its card's secrets (generation 0, or the bundle's, phase Done).
	Saved Saved
	// Path is where the board keeps its secrets (Save); "": not kept,
	// and a restart comes back on the card's.
	Path string
	// Keyring is memberlist's (state.Cluster.Keyring); nil: gossip is
	// not encrypted.
	Keyring Keyring
	// Install makes primary the secrets the board uses for marks, its
	// board credential and session cookies, and also those it further
	// accepts; called at New and at each phase it takes. Quick.
	Install func(primary Secrets, also []Secrets)
	// Live names the boards alive on the gossip now, this one included,
	// revoked ones left out: the boards a phase waits for.
	Live func() []string
	// Missed names the cluster's boards that are not alive (revoked ones
	// left out); Push offers each the sealed document once a rotation is
	// Done (a board that was down comes back on keys the others no longer
	// have). Both nil: no pushes (TLS off: docs/NOTES.md "Security").
	Missed func() []string
	Push   func(ctx context.Context, board string, sealed []byte) error
	// Tick is how often the roll is looked at besides each commit;
	// default 250 ms. PushEvery spaces pushes to one board; default 2 s.
	Tick, PushEvery time.Duration
	// Verify is the admin's public key (the bundle's verify_key): a
	// rotation must be signed by it to start, and to be taken at all,
	// from the log (a committed entry or a restored snapshot) as from
	// another board (Offer). Nil: none is checked (a cluster without an
	// admin bundle, which has no signing key).
	Verify ed25519.PublicKey
	Now    func() time.Time // default time.Now
	Log    *slog.Logger
}

// Roller is one board's part of the rotations: it takes each phase the
// log commits (keyring, secrets, the file), says so in the document, and
// moves the document to the next phase once every live board has taken
// this one. Every board drives: the moves are conditional writes, so
// two boards that see the same acks make one move.
type Roller struct {
	o       Options
	wake    chan struct{}
	pushing atomic.Bool    // a round of pushes is under way
	pushes  sync.WaitGroup // it, for Run to wait on

	mu       sync.Mutex
	saved    Saved
	badDoc   uint64 // the version of the document last found unreadable or refused (logged once)
	badErr   error  // why
	opened   Doc    // the document at version openedAt, opened once
	openedAt uint64
	pushedAt map[string]time.Time // the last push to each board
}

// New installs o.Saved's secrets (Options.Install), guards the log's
// rotation entries (Guard) and watches them; call before the log runs. Run does the rest.
func New(o Options) *Roller {
	if o.Tick <= 0 {
		o.Tick = 250 * time.Millisecond
	}
	if o.PushEvery <= 0 {
		o.PushEvery = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	r := &Roller{o: o, wake: make(chan struct{}, 1), saved: o.Saved, pushedAt: map[string]time.Time{}}
	o.State.Guard(durable.KindRotation, Guard(o.Saved.Store, o.Verify)) // every entry, on every board: the admin's, and the next
	o.State.Watch(durable.KindRotation, func(durable.Document) { r.poke() })
	if o.Install != nil {
		o.Install(o.Saved.Keys())
	}
	return r
}

func (r *Roller) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Saved is the board's secrets now.
func (r *Roller) Saved() Saved {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saved
}

// Run takes, acknowledges and drives the rotation until ctx ends.
func (r *Roller) Run(ctx context.Context) {
	t := time.NewTicker(r.o.Tick)
	defer t.Stop()
	defer r.pushes.Wait()
	for {
		r.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-t.C:
		}
	}
}

// errNoDoc: the log holds no rotation document.
var errNoDoc = errors.New("rotate: no rotation in the log")

// current is the log's document, opened and admitted (admit: the admin's
// signature, a rotation's generation); errNoDoc when there is none, else
// why it is not taken (logged once per version): it does not open, or
// refused(err). Every document the board takes from the log passes here.
func (r *Roller) current() (Doc, uint64, error) {
	cur := r.o.State.Get(durable.KindRotation)
	if len(cur.Data) == 0 {
		return Doc{}, cur.Version, errNoDoc
	}
	r.mu.Lock()
	switch cur.Version {
	case r.openedAt:
		d := r.opened
		r.mu.Unlock()
		return d, cur.Version, nil
	case r.badDoc:
		err := r.badErr
		r.mu.Unlock()
		return Doc{}, cur.Version, err
	}
	r.mu.Unlock()
	d, err := Open(r.store(), cur.Data)
	if err == nil {
		err = admit(r.o.Verify, d)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.badDoc, r.badErr = cur.Version, err
		if refused(err) {
			r.o.Log.Error("rotate: the log's rotation document is refused: this board keeps its secrets", "version", cur.Version, "gen", d.Gen, "phase", d.Phase, "by", d.By, "err", err)
		} else {
			r.o.Log.Error("rotate: the log's rotation document: not taken", "version", cur.Version, "err", err)
		}
		return Doc{}, cur.Version, err
	}
	r.opened, r.openedAt = d, cur.Version
	return d, cur.Version, nil
}

func (r *Roller) store() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saved.Store
}

// step is one look at the log's document.
func (r *Roller) step(ctx context.Context) {
	d, ver, err := r.current()
	if err != nil {
		return
	}
	r.take(d)
	s := r.Saved()
	switch {
	case s.Gen != d.Gen || s.Phase != d.Phase:
		// a later document than this board takes (a newer build's?)
	case d.Acks[r.o.Self] != d.Phase:
		r.update(ctx, ver, d, func(n *Doc) {
			if n.Acks == nil {
				n.Acks = map[string]Phase{}
			}
			n.Acks[r.o.Self] = n.Phase
		})
	case d.Phase != Done && len(waiting(d, r.live())) == 0:
		next := Use
		if d.Phase == Use {
			next = Done
		}
		r.update(ctx, ver, d, func(n *Doc) { n.Phase = next })
		r.o.Log.Info("rotate: every live board took the phase: next", "gen", d.Gen, "phase", d.Phase, "next", next)
	case d.Phase == Done && r.o.Push != nil && r.pushing.CompareAndSwap(false, true):
		r.pushes.Go(func() { // a dial to a board that is gone takes its timeout: not in the roll's loop
			defer r.pushing.Store(false)
			r.push(ctx, ver)
		})
	}
}

// update commits change of d (at log version ver); a conflict (another
// board wrote first) is taken at the next step.
func (r *Roller) update(ctx context.Context, ver uint64, d Doc, change func(*Doc)) {
	d.Acks = maps.Clone(d.Acks) // d may be the opened document kept for the next look
	change(&d)
	sealed, err := Seal(r.store(), d)
	if err != nil {
		r.o.Log.Error("rotate: seal", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := r.o.State.Apply(ctx, durable.KindRotation, sealed, ver); err != nil {
		r.o.Log.Debug("rotate: write the rotation document: not yet", "err", err)
	}
}

// take applies d to this board: keyring, secrets, file.
func (r *Roller) take(d Doc) bool {
	r.mu.Lock()
	next, ops, changed := Take(r.saved, d)
	if !changed {
		r.mu.Unlock()
		return false
	}
	if r.o.Keyring != nil {
		if err := Do(r.o.Keyring, ops); err != nil {
			r.mu.Unlock()
			r.o.Log.Error("rotate: gossip keyring: phase not taken", "gen", d.Gen, "phase", d.Phase, "err", err)
			return false
		}
	}
	r.saved = next
	r.mu.Unlock()
	if r.o.Install != nil {
		r.o.Install(next.Keys())
	}
	if r.o.Path != "" {
		if err := Save(r.o.Path, next); err != nil {
			r.o.Log.Error("rotate: the new secrets are not kept: a restart comes back on the previous ones", "err", err)
		}
	} else {
		r.o.Log.Warn("rotate: no state_dir: the new secrets are not kept, a restart comes back on the card's")
	}
	r.o.Log.Info("rotate: took the cluster's new secrets", "gen", next.Gen, "phase", next.Phase)
	return true
}

// Offer takes a sealed document another board pushed (a board that
// missed a rotation, reached with its certificate); changed is false when
// it is nothing new.
func (r *Roller) Offer(sealed []byte) (changed bool, err error) {
	d, err := Open(r.store(), sealed)
	if err != nil {
		return false, err
	}
	if err := admit(r.o.Verify, d); err != nil {
		return false, err
	}
	return r.take(d), nil
}

// ErrUnsigned: a rotation without the admin's signature, where one is
// required (Options.Verify).
var ErrUnsigned = errors.New("rotate: the rotation is not signed by the admin bundle's signing key")

// StaleError: a rotation signed for another generation than the next.
type StaleError struct{ Want, Next uint64 }

func (e *StaleError) Error() string {
	return fmt.Sprintf("rotate: the rotation was made for generation %d, and the next is %d: the cluster moved on, try again", e.Want, e.Next)
}

// push offers the document to the boards that are not alive, each once
// every PushEvery.
func (r *Roller) push(ctx context.Context, ver uint64) {
	if r.o.Push == nil || r.o.Missed == nil {
		return
	}
	now := r.o.Now()
	for _, b := range r.o.Missed() {
		r.mu.Lock()
		due := now.Sub(r.pushedAt[b]) >= r.o.PushEvery
		if due {
			r.pushedAt[b] = now
		}
		r.mu.Unlock()
		if !due {
			continue
		}
		sealed := r.o.State.Get(durable.KindRotation)
		if sealed.Version != ver {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := r.o.Push(pctx, b, sealed.Data)
		cancel()
		r.o.Log.Debug("rotate: offered the secrets to a board that is not alive", "board", b, "err", err)
	}
}

func (r *Roller) live() []string {
	if r.o.Live == nil {
		return []string{r.o.Self}
	}
	return r.o.Live()
}

// waiting is the live boards that have not taken d's phase.
func waiting(d Doc, live []string) []string {
	var out []string
	for _, b := range live {
		if d.Acks[b] != d.Phase {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}

// Status is a rotation as GET /api/cluster/rotate shows it: never a secret.
type Status struct {
	Gen      uint64           `json:"gen"`
	Phase    Phase            `json:"phase,omitempty"`
	By       string           `json:"by,omitempty"`
	At       time.Time        `json:"at,omitzero"`
	Acks     map[string]Phase `json:"acks,omitempty"`
	Waiting  []string         `json:"waiting"`  // live boards that have not taken the phase
	Finished bool             `json:"finished"` // Done, and taken by every live board
	Self     Phase            `json:"self,omitempty"`
}

// Status is the rotation as this board sees it.
func (r *Roller) Status() Status {
	s := r.Saved()
	st := Status{Gen: s.Gen, Self: s.Phase, Waiting: []string{}}
	d, _, err := r.current()
	if err != nil { // none, or one this board does not take: its own secrets are the cluster's to it
		st.Finished = true
		return st
	}
	st.Gen, st.Phase, st.By, st.At, st.Acks = max(d.Gen, s.Gen), d.Phase, d.By, d.At, d.Acks
	st.Waiting = waiting(d, r.live())
	if st.Waiting == nil {
		st.Waiting = []string{}
	}
	st.Finished = d.Phase == Done && len(st.Waiting) == 0
	return st
}

// RollingError: a rotation is still rolling; a second one waits for it.
type RollingError struct{ Status Status }

func (e *RollingError) Error() string {
	return fmt.Sprintf("rotate: rotation %d is still rolling (phase %s, waiting for %v): try again once it is done", e.Status.Gen, e.Status.Phase, e.Status.Waiting)
}

// Start commits generation gen's secrets in phase Install, sig the
// admin's signature of them (Signed); the boards roll it from there
// (Run). ErrUnsigned when a signature is required and sig is not it;
// *StaleError when gen is not the next generation (Status.Gen+1; 0 takes
// the next when no signature is required); ErrLastGeneration when the
// next would be past MaxGen; *RollingError while the previous rotation
// is not Done; the log's errors pass through (*durable.NoQuorumError: no
// majority on this side). A document in the log this board refuses
// (admit) is replaced: it is no rotation of the admin's.
func (r *Roller) Start(ctx context.Context, sec Secrets, by string, gen uint64, sig []byte) (Doc, error) {
	if len(sec.Key) == 0 || len(sec.Session) == 0 {
		return Doc{}, errors.New("rotate: a new key and session secret are required")
	}
	if r.o.Verify != nil && !Verify(r.o.Verify, gen, sec.Key, sec.Session, sig) {
		return Doc{}, ErrUnsigned
	}
	for {
		d, ver, err := r.current()
		switch {
		case err == nil && d.Phase != Done:
			return Doc{}, &RollingError{Status: r.Status()}
		case err == nil, errors.Is(err, errNoDoc):
		case refused(err):
			r.o.Log.Warn("rotate: a rotation replaces the log's document this board refused", "version", ver, "err", err)
			d = Doc{}
		default:
			return Doc{}, errors.New("rotate: the log's rotation document does not open on this board")
		}
		last := max(d.Gen, r.Saved().Gen)
		if last >= MaxGen {
			return Doc{}, ErrLastGeneration
		}
		next := last + 1
		if (gen != 0 || r.o.Verify != nil) && gen != next {
			return Doc{}, &StaleError{Want: gen, Next: next}
		}
		nd := Doc{Gen: next, Phase: Install, Key: sec.Key, Session: sec.Session,
			By: by, At: r.o.Now().UTC(), Acks: map[string]Phase{}, Sig: sig}
		sealed, err := Seal(r.store(), nd)
		if err != nil {
			return Doc{}, err
		}
		_, err = r.o.State.Apply(ctx, durable.KindRotation, sealed, ver)
		var ce *durable.ConflictError
		if errors.As(err, &ce) && ctx.Err() == nil {
			continue // another rotation, or an ack, got in first: look again
		}
		if err != nil {
			return Doc{}, err
		}
		r.poke()
		return nd, nil
	}
}
