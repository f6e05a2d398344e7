package rotate

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/ews-firmware/ews/internal/bundle"
)

// MaxGen is the last generation of a rotation: the last an admin bundle
// holds (a TOML integer is signed 64-bit). A rotation past it is refused,
// never wrapped to 0.
const MaxGen uint64 = bundle.MaxGeneration

// GenerationError: a rotation document whose generation no rotation has:
// 0 (the card's secrets, never a rotation) or past MaxGen.
type GenerationError struct{ Gen uint64 }

func (e *GenerationError) Error() string {
	return fmt.Sprintf("rotate: generation %d: a rotation's is 1 to %d (a forged document?)", e.Gen, MaxGen)
}

// ErrLastGeneration: the cluster is at MaxGen, and no rotation can follow.
var ErrLastGeneration = fmt.Errorf("rotate: the cluster's secrets are at generation %d, the last a bundle holds: no rotation can follow (flash the boards new bundles from a new `ews cluster init`)", MaxGen)

// admit is nil when a board may take d, wherever it comes from (the log,
// a snapshot the log restores, another board's offer): its generation is
// a rotation's (1 to MaxGen) and, when verify is set, the admin signed
// its generation and secrets (Verify) exactly as for an offer. A
// document older than the board's secrets passes here and changes
// nothing (Take).
func admit(verify ed25519.PublicKey, d Doc) error {
	if verify != nil && !Verify(verify, d.Gen, d.Key, d.Session, d.Sig) {
		return ErrUnsigned
	}
	if d.Gen == 0 || d.Gen > MaxGen {
		return &GenerationError{Gen: d.Gen}
	}
	return nil
}

// refused reports whether err is admit's: the document opened, and is not
// one a board takes.
func refused(err error) bool {
	var ge *GenerationError
	return errors.Is(err, ErrUnsigned) || errors.As(err, &ge)
}
