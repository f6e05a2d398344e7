package firmware

import (
	"errors"
	"net/http"

	"github.com/ews-firmware/ews/internal/httpx"
)

// MaxBytes is the largest upload a board takes (a static ews is ~14 MB).
const MaxBytes = 64 << 20

// Refused answers a refused upload: 403 with reason "signature" for an
// image the cluster's key did not sign, 409 while another upgrade is
// pending, 500 when the board cannot write, else 400.
func Refused(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrSignature):
		httpx.JSON(w, http.StatusForbidden, map[string]string{"error": err.Error(), "reason": "signature"})
	case errors.Is(err, ErrPending):
		httpx.Error(w, http.StatusConflict, "%v", err)
	case errors.Is(err, ErrWrite):
		httpx.Error(w, http.StatusInternalServerError, "%v", err)
	default:
		httpx.Error(w, http.StatusBadRequest, "%v", err)
	}
}
