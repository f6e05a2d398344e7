package firmware

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A/B slots (docs/NOTES.md, Boards: lifecycle, page, upgrades). A
// packaged board runs /usr/bin/ews under systemd's ProtectSystem=strict:
// nothing next to the binary can be written, so an upload cannot be
// swapped in there. It goes instead into one of two slots under the state
// directory (the unit's ReadWritePaths), and the packaged binary, when
// `ews run` starts, hands over (exec, same PID, so systemd's notify and
// watchdog follow) to the slot that is active:
//
//	DIR/a, DIR/b     the two slots; the inactive one takes the next upload
//	DIR/slots.json   SlotState: which slot is active, a trial pending
//
// Rollback unless it serves: an upload is a trial. Choose starts it once
// (counting the try); the new binary commits it when it is ready
// (CommitTrial). A trial binary that stops, hangs past systemd's start
// timeout or is restarted before it was ready comes back to Choose with
// the try already counted: the trial is dropped and the active slot (or
// the packaged binary) runs again.
//
// apt and OTA: the one installed last wins. A committed slot records the
// SHA-256 of the packaged binary it was installed over; when an apt
// upgrade has replaced that binary since, Choose retires the slot and the
// packaged binary runs. An upload after that goes on top of the new
// package, and wins until the next apt upgrade.

// DefaultSlotDir is where the slots live on a packaged board (under the
// unit's ReadWritePaths=/var/lib/ews). EnvSlotDir overrides it.
const DefaultSlotDir = "/var/lib/ews/firmware"

// EnvSlotDir names the slot directory; set, slots are used even when the
// binary's own directory is writable.
const EnvSlotDir = "EWS_FIRMWARE_DIR"

const slotStateFile = "slots.json"

// SlotState is DIR/slots.json.
type SlotState struct {
	Active     string  `json:"active"`                // "a", "b", or "" (the packaged binary)
	SHA256     string  `json:"sha256,omitempty"`      // of the active slot
	BaseSHA256 string  `json:"base_sha256,omitempty"` // of the packaged binary the active slot was installed over
	Trial      *Trial  `json:"trial,omitempty"`
	Last       *Result `json:"last,omitempty"`
}

// Trial is an uploaded slot waiting to serve.
type Trial struct {
	Slot  string `json:"slot"`
	Tries int    `json:"tries"` // starts counted by Choose
	Marker
}

// Slots are the A/B slots in Dir for the packaged binary Base.
type Slots struct {
	Dir  string // the slot directory
	Base string // the packaged binary (/usr/bin/ews)
}

// SlotsFor says whether exe (the running binary) upgrades through slots:
// it runs from a slot directory, or EnvSlotDir is set, or its own
// directory cannot be written (a read-only /usr/bin). base is the packaged
// binary: exe itself, or the one recorded when exe runs from a slot.
func SlotsFor(exe string) (*Slots, bool) {
	if exe == "" {
		return nil, false
	}
	dir := os.Getenv(EnvSlotDir)
	explicit := dir != ""
	if !explicit {
		dir = DefaultSlotDir
	}
	if filepath.Dir(exe) == filepath.Clean(dir) {
		base, err := os.ReadFile(filepath.Join(dir, "base"))
		if err != nil {
			return nil, false
		}
		return &Slots{Dir: dir, Base: strings.TrimSpace(string(base))}, true
	}
	if explicit || syscall.Access(filepath.Dir(exe), 2 /* W_OK */) != nil {
		return &Slots{Dir: dir, Base: exe}, true
	}
	return nil, false
}

// Path is slot's binary.
func (s *Slots) Path(slot string) string { return filepath.Join(s.Dir, slot) }

// State reads DIR/slots.json; a missing file is the zero state.
func (s *Slots) State() (SlotState, error) {
	var st SlotState
	b, err := os.ReadFile(filepath.Join(s.Dir, slotStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("firmware: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("firmware: %s: %w", slotStateFile, err)
	}
	return st, nil
}

func (s *Slots) save(st SlotState) error {
	if err := writeJSON(filepath.Join(s.Dir, slotStateFile), st); err != nil {
		return fmt.Errorf("%w: %v", ErrWrite, err)
	}
	syncDir(filepath.Join(s.Dir, slotStateFile))
	return nil
}

// Stage writes the upload into the inactive slot and makes it a trial:
// the same checks as Stage (size, SHA-256, ELF machine), nothing written
// outside Dir, the active binary untouched.
func (s *Slots) Stage(src io.Reader, maxBytes int64, wantSHA string, a Arch, pub ed25519.PublicKey, m Marker) (Marker, error) {
	st, err := s.State()
	if err != nil {
		return m, err
	}
	if st.Trial != nil {
		return m, ErrPending
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return m, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	// the packaged binary a slot binary must come back to (SlotsFor)
	if err := os.WriteFile(filepath.Join(s.Dir, "base"), []byte(s.Base+"\n"), 0o644); err != nil {
		return m, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	slot := "a"
	if st.Active == "a" {
		slot = "b"
	}
	tmp := s.Path(slot) + suffixNew
	got, err := Receive(tmp, src, maxBytes, wantSHA, a, pub)
	if err != nil {
		return m, err
	}
	if err := os.Rename(tmp, s.Path(slot)); err != nil {
		os.Remove(tmp)
		return m, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	m.SHA256, m.Staged = got, m.Staged.UTC()
	st.Trial = &Trial{Slot: slot, Marker: m}
	if err := s.save(st); err != nil {
		return m, err
	}
	return m, nil
}

// Choose is the packaged binary's decision at start: the binary to run and
// whether it runs as a trial; note says what changed, for the log ("" none).
func (s *Slots) Choose(now time.Time) (path string, trial bool, note string, err error) {
	st, err := s.State()
	if err != nil {
		return s.Base, false, "", err
	}
	if t := st.Trial; t != nil {
		if t.Tries == 0 {
			t.Tries++
			if err := s.save(st); err != nil {
				return s.Base, false, "", err
			}
			return s.Path(t.Slot), true, fmt.Sprintf("trying the uploaded firmware %.12s in slot %s", t.SHA256, t.Slot), nil
		}
		reason := "the new binary stopped or was restarted before it was ready"
		st.Last = &Result{SHA256: t.SHA256, FromVersion: t.FromVersion, Outcome: "rolled back", Reason: reason, At: now.UTC()}
		st.Trial = nil
		note = fmt.Sprintf("rolled back the uploaded firmware %.12s: %s", t.SHA256, reason)
		if err := s.save(st); err != nil {
			return s.Base, false, note, err
		}
	}
	if st.Active == "" {
		return s.Base, false, note, nil
	}
	base, err := SHA256File(s.Base)
	if err != nil {
		return s.Base, false, note, fmt.Errorf("firmware: %w", err)
	}
	if base != st.BaseSHA256 {
		retired := st.Active
		st.Active, st.SHA256, st.BaseSHA256 = "", "", ""
		if err := s.save(st); err != nil {
			return s.Base, false, note, err
		}
		return s.Base, false, strings.TrimPrefix(note+"; ", "; ") + fmt.Sprintf("%s was replaced (a package upgrade) after slot %s was installed: the newer, %s, runs; slot %s retired", s.Base, retired, s.Base, retired), nil
	}
	return s.Path(st.Active), false, note, nil
}

// CommitTrial makes the trial running from exe the active slot: it is
// ready. False when exe is not a pending trial.
func (s *Slots) CommitTrial(exe string, now time.Time) (bool, error) {
	st, err := s.State()
	if err != nil || st.Trial == nil || s.Path(st.Trial.Slot) != exe {
		return false, err
	}
	base, err := SHA256File(s.Base)
	if err != nil {
		return false, fmt.Errorf("firmware: %w", err)
	}
	t := st.Trial
	st.Active, st.SHA256, st.BaseSHA256, st.Trial = t.Slot, t.SHA256, base, nil
	st.Last = &Result{SHA256: t.SHA256, FromVersion: t.FromVersion, Outcome: "committed", At: now.UTC()}
	return true, s.save(st)
}

// Pending is the trial's marker, as Pending gives it for a binary's own files.
func (s *Slots) Pending() (Marker, bool) {
	st, err := s.State()
	if err != nil || st.Trial == nil {
		return Marker{}, false
	}
	return st.Trial.Marker, true
}

// Last is the last upgrade's outcome.
func (s *Slots) Last() (Result, bool) {
	st, err := s.State()
	if err != nil || st.Last == nil {
		return Result{}, false
	}
	return *st.Last, true
}

// DropTrial gives up the pending trial (the board could not restart into
// it); the active binary stays.
func (s *Slots) DropTrial(reason string, now time.Time) error {
	st, err := s.State()
	if err != nil || st.Trial == nil {
		return err
	}
	t := st.Trial
	st.Last = &Result{SHA256: t.SHA256, FromVersion: t.FromVersion, Outcome: "rolled back", Reason: reason, At: now.UTC()}
	st.Trial = nil
	return s.save(st)
}
