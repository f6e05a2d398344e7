package vip

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

const (
	capNetAdmin = 12
	capNetRaw   = 13
)

// checkCaps names the capabilities this process lacks to add an address
// (CAP_NET_ADMIN) and send raw ARP (CAP_NET_RAW).
func checkCaps() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("vip: read capabilities: %w", err)
	}
	return capsMissing(string(b))
}

func capsMissing(status string) error {
	for _, line := range strings.Split(status, "\n") {
		v, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		eff, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return fmt.Errorf("vip: bad CapEff %q", strings.TrimSpace(v))
		}
		var missing []string
		if eff&(1<<capNetAdmin) == 0 {
			missing = append(missing, "CAP_NET_ADMIN")
		}
		if eff&(1<<capNetRaw) == 0 {
			missing = append(missing, "CAP_NET_RAW")
		}
		if len(missing) > 0 {
			return fmt.Errorf("vip: cluster.vip needs %s: run ews as root, or `systemctl edit ews` and add CAP_NET_ADMIN CAP_NET_RAW to AmbientCapabilities and CapabilityBoundingSet and AF_PACKET to RestrictAddressFamilies (see packaging/ews.service)", strings.Join(missing, " and "))
		}
		return nil
	}
	return fmt.Errorf("vip: no CapEff line in /proc/self/status")
}
