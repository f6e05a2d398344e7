package node

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/rollout"
)

// Firmware upload limits.
const (
	MaxFirmwareBytes = firmware.MaxBytes // a static ews is ~14 MB
	ReadyWithin      = 60 * time.Second  // the new binary must serve within this, else it is rolled back
	firmwarePath     = "/api/board/firmware"
	// HeaderFirmwareSHA256 carries the SHA-256 (hex) the user confirmed.
	HeaderFirmwareSHA256 = rollout.HeaderSHA256
)

// errExiting: a restart or upgrade of this board is already under way.
var errExiting = errors.New("node: a restart or upgrade is already under way")

// serveFirmware is POST /api/board/firmware: the body is the new binary,
// signed (node/firmware, sign.go), the header the SHA-256 of the upload.
// It is checked (hash, signature, ELF machine), swapped in
// atomically (the old one kept as .prev), and the board restarts into it;
// the supervisor rolls it back unless it is ready within ReadyWithin.
func (n *Node) serveFirmware(w http.ResponseWriter, r *http.Request) {
	if n.bin.path == "" {
		httpx.Error(w, http.StatusNotImplemented, "node: firmware upgrade: the running executable is unknown")
		return
	}
	want := r.Header.Get(HeaderFirmwareSHA256)
	if want == "" {
		want = r.URL.Query().Get("sha256")
	}
	if want == "" {
		httpx.Error(w, http.StatusBadRequest, "node: firmware upgrade needs the binary's SHA-256 in the %s header", HeaderFirmwareSHA256)
		return
	}
	if r.ContentLength > MaxFirmwareBytes {
		httpx.Error(w, http.StatusRequestEntityTooLarge, "node: firmware larger than %d bytes", MaxFirmwareBytes)
		return
	}
	if n.Exit() != ExitStop {
		httpx.Error(w, http.StatusConflict, "%v", errExiting)
		return
	}
	m, err := n.stageFirmware(r.Body, want)
	switch {
	case errors.Is(err, errExiting):
		httpx.Error(w, http.StatusConflict, "%v", err)
		return
	case err != nil:
		n.log.Warn("firmware upload refused", "remote", r.RemoteAddr, "err", err)
		firmware.Refused(w, err)
		return
	}
	n.log.Warn("firmware staged, restarting into it", "sha256", m.SHA256, "from_version", m.FromVersion, "ready_within", m.ReadyWithin)
	httpx.JSON(w, http.StatusAccepted, map[string]string{"status": "upgrading", "name": n.boot.state.Name, "sha256": m.SHA256, "from_version": m.FromVersion, "ready_within": m.ReadyWithin})
}

// stageFirmware swaps in the binary read from src (sum its SHA-256) and
// has Run return to restart into it: an upload's, or a rolling upgrade's
// last step (node/rollout). A plain restart that won the race would start
// the new binary without a supervisor to roll it back: the swap is undone
// and the error is errExiting.
func (n *Node) stageFirmware(src io.Reader, sum string) (firmware.Marker, error) {
	n.bin.mu.Lock()
	defer n.bin.mu.Unlock()
	m, err := firmware.Stage(n.bin.path, src, MaxFirmwareBytes, sum, firmware.Here(buildinfo.GOARM()), n.sec.verify, firmware.Marker{
		FromVersion: buildinfo.Version, Staged: time.Now(), ReadyWithin: ReadyWithin.String(),
	})
	if err != nil {
		return m, err
	}
	if !n.requestExit(ExitUpgrade) {
		_ = firmware.Rollback(n.bin.path, m, "a restart was already under way", time.Now())
		return m, errExiting
	}
	return m, nil
}
