package access

import (
	"errors"
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/audit"
)

// TurnBack writes a rule's refused or retried turn-back to log: action
// rule.turn_back, the answer's status (200 once it ran after a retry)
// (automation.OnTurnBack).
func TurnBack(log *audit.Log) func(c actuate.Command, tries int, err error) {
	return func(c actuate.Command, tries int, err error) {
		status := http.StatusOK
		var ae *actuate.Error
		switch {
		case errors.As(err, &ae):
			status = ae.Status
		case err != nil:
			status = http.StatusServiceUnavailable
		}
		log.Record(audit.Entry{User: "rule:" + strings.TrimPrefix(c.Origin, "rule-"), Role: "admin",
			Action: "rule.turn_back", Target: c.Device + " " + c.Kind.String(), Result: status})
	}
}
