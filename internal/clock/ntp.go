package clock

import (
	"errors"
	"fmt"
	"time"

	"github.com/beevik/ntp"
)

// NTPTimeout bounds one server's answer.
const NTPTimeout = 2 * time.Second

// NTP asks servers in turn ("host" or "host:port", port 123 by default)
// for the offset of their time from this board's own clock (Local), as
// the correction that makes Now their time; the first valid answer wins.
// It returns the offset and the server that gave it.
func (c *Clock) NTP(servers []string) (time.Duration, string, error) {
	var errs []error
	for _, s := range servers {
		r, err := ntp.QueryWithOptions(s, ntp.QueryOptions{Timeout: NTPTimeout, GetSystemTime: c.Local})
		if err == nil {
			err = r.Validate()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
			continue
		}
		return r.ClockOffset, s, nil
	}
	if len(errs) == 0 {
		return 0, "", errors.New("clock: no NTP server")
	}
	return 0, "", fmt.Errorf("clock: ntp: %w", errors.Join(errs...))
}
