package bootconf

import (
	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/sandbox"
)

// OpenDevices opens this board's devices with opts. A device of the boot file that
// does not open stops the board, naming its line (docs/DESIGN.md,
// Wiring); one of a version of the configuration store (StoreWins) is
// reported as a live apply reports it, and the others run: a board that
// starts beats one that does not, and the version is the cluster's, not
// this board's to refuse.
func (b *Boot) OpenDevices(opts hal.Options) (*hal.Devices, map[string]string, error) {
	// command devices run their programs in the CGI programs' box: the
	// same user and limits (docs/DESIGN.md "Board services"), for every
	// version of the store this board applies
	box, err := sandbox.New(b.CGI.Box("hal", "device programs", opts.Logger))
	if err != nil {
		return nil, nil, b.Cite("cgi.user", err)
	}
	opts.Poll, opts.Now, opts.Programs = b.Poll, b.Clock.Now, box
	devs, err := hal.New(b.HAL, opts)
	if err == nil {
		return devs, nil, nil
	}
	if b.StoreText == nil || string(b.StoreText) == string(b.StoreSeed) {
		return nil, nil, b.CiteDevices(err)
	}
	opts.Logger.Error("devices: the configuration store's devices do not all open on this board; the others run", "err", err)
	none := b.HAL
	none.Devices = nil
	if devs, err = hal.New(none, opts); err != nil {
		return nil, nil, err
	}
	res, err := devs.Apply(b.HAL)
	if err != nil {
		_ = devs.Close()
		return nil, nil, err
	}
	return devs, res.Failed, nil
}
