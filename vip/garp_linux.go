package vip

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ethernet"
)

// gratuitousARP broadcasts an ARP request for ip from ip (RFC 5227's
// announcement): neighbours that know ip learn this board's MAC for it.
func gratuitousARP(ifi *net.Interface, ip netip.Addr) error {
	if len(ifi.HardwareAddr) != 6 {
		return fmt.Errorf("vip: %s has no Ethernet address for gratuitous ARP", ifi.Name)
	}
	c, err := arp.Dial(ifi)
	if err != nil {
		return fmt.Errorf("vip: ARP socket on %s: %w", ifi.Name, err)
	}
	defer c.Close()
	p, err := arp.NewPacket(arp.OperationRequest, ifi.HardwareAddr, ip, net.HardwareAddr{0, 0, 0, 0, 0, 0}, ip)
	if err != nil {
		return fmt.Errorf("vip: gratuitous ARP: %w", err)
	}
	if err := c.WriteTo(p, ethernet.Broadcast); err != nil {
		return fmt.Errorf("vip: send gratuitous ARP on %s: %w", ifi.Name, err)
	}
	return nil
}
