package node

import (
	"time"

	"github.com/ews-firmware/ews/node/firmware"
)

// Firmware upload limits (node/firmware's Upload serves the upload).
const (
	MaxFirmwareBytes = firmware.MaxBytes // a static ews is ~14 MB
	ReadyWithin      = 60 * time.Second  // the new binary must serve within this, else it is rolled back
	firmwarePath     = firmware.Path
	// HeaderFirmwareSHA256 carries the SHA-256 (hex) the user confirmed.
	HeaderFirmwareSHA256 = firmware.HeaderSHA256
)
