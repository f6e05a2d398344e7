package node

import (
	"errors"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/firmware"
)

// Firmware upload limits.
const (
	MaxFirmwareBytes = 64 << 20         // a static ews is ~14 MB
	ReadyWithin      = 60 * time.Second // the new binary must serve within this, else it is rolled back
	firmwarePath     = "/api/board/firmware"
	// HeaderFirmwareSHA256 carries the SHA-256 (hex) the user confirmed.
	HeaderFirmwareSHA256 = "X-Firmware-Sha256"
)

// firmwareRefused answers a refused upload: 403 with reason "signature"
// for an image the cluster's key did not sign, 409 while another upgrade
// is pending, 500 when the board cannot write, else 400.
func firmwareRefused(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, firmware.ErrSignature):
		httpx.JSON(w, http.StatusForbidden, map[string]string{"error": err.Error(), "reason": "signature"})
	case errors.Is(err, firmware.ErrPending):
		httpx.Error(w, http.StatusConflict, "%v", err)
	case errors.Is(err, firmware.ErrWrite):
		httpx.Error(w, http.StatusInternalServerError, "%v", err)
	default:
		httpx.Error(w, http.StatusBadRequest, "%v", err)
	}
}

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
		httpx.Error(w, http.StatusConflict, "node: a restart or upgrade is already under way")
		return
	}
	n.bin.mu.Lock()
	defer n.bin.mu.Unlock()
	m, err := firmware.Stage(n.bin.path, r.Body, MaxFirmwareBytes, want, firmware.Here(buildinfo.GOARM()), n.sec.verify, firmware.Marker{
		FromVersion: buildinfo.Version, Staged: time.Now(), ReadyWithin: ReadyWithin.String(),
	})
	if err != nil {
		n.log.Warn("firmware upload refused", "remote", r.RemoteAddr, "err", err)
		firmwareRefused(w, err)
		return
	}
	if !n.requestExit(ExitUpgrade) {
		// A plain restart won the race; it would start the new binary
		// without a supervisor to roll it back: undo the swap.
		_ = firmware.Rollback(n.bin.path, m, "a restart was already under way", time.Now())
		httpx.Error(w, http.StatusConflict, "node: a restart or upgrade is already under way")
		return
	}
	n.log.Warn("firmware staged, restarting into it", "sha256", m.SHA256, "from_version", m.FromVersion, "ready_within", m.ReadyWithin)
	httpx.JSON(w, http.StatusAccepted, map[string]string{"status": "upgrading", "name": n.boot.state.Name, "sha256": m.SHA256, "from_version": m.FromVersion, "ready_within": m.ReadyWithin})
}
