package state

import (
	"errors"

	"github.com/ews-firmware/ews/internal/promx"
)

// metrics are the cluster's Prometheus series. Bytes count our own
// messages (tables, reports...), not memberlist's probes and gossip.
type metrics struct {
	epoch     *promx.Gauge
	isMaster  *promx.Gauge
	takeovers *promx.Counter
	version   *promx.Gauge
	sent      *promx.Vec[*promx.Counter] // type
	received  *promx.Vec[*promx.Counter] // type
	refused   *promx.Vec[*promx.Counter] // type: table report stepdown peerlist unknown encrypted overflow peers member signature unsigned replay later
	bytes     *promx.Vec[*promx.Counter] // direction: sent received
	wire      *promx.Counter             // every UDP byte sent, memberlist's own included
}

func newMetrics(reg *promx.Registry) (*metrics, error) {
	if reg.Has("ews_cluster_epoch") {
		return nil, errors.New("state: cluster metrics are already registered (one Cluster per registry)")
	}
	m := &metrics{
		epoch:     reg.Gauge("ews_cluster_epoch", "Epoch of the master this board follows (or is)."),
		isMaster:  reg.Gauge("ews_cluster_is_master", "1 while this board is the master."),
		takeovers: reg.Counter("ews_cluster_takeovers_total", "Times this board claimed mastership."),
		version:   reg.Gauge("ews_cluster_table_version", "Version of the latest table."),
		sent:      reg.CounterVec("ews_cluster_messages_sent_total", "Cluster messages sent, by type (one per receiver).", "type"),
		received:  reg.CounterVec("ews_cluster_messages_received_total", "Cluster messages received and accepted, by type.", "type"),
		refused: reg.CounterVec("ews_cluster_messages_refused_total", "Cluster messages refused, by type; encrypted = gossip that no installed key decrypts; peers = the sender's peer list differs (also counted by type); member = a board whose name and address do not match cluster.peers; signature = a sealed (version 5) message whose tag is not the named board's for this board, or an intro whose certificate or endorsement does not verify; unsigned = an unsigned message naming a board that seals its messages; replay = a sealed message or intro key seen before (also counted by type); later = an intro with a new key of a board whose last new key was checked under 50 ms before: not checked, the board is asked for it again.",
			"type"),
		bytes: reg.CounterVec("ews_cluster_gossip_bytes_total", "Bytes of cluster messages (before encryption), by direction.", "direction"),
		wire:  reg.Counter("ews_cluster_wire_bytes_sent_total", "UDP bytes sent by the gossip transport, memberlist's probes and gossip included, after encryption."),
	}
	for _, t := range []string{"table", "report", "stepdown", "peerlist"} {
		m.sent.WithLabelValues(t)
		m.received.WithLabelValues(t)
		m.refused.WithLabelValues(t)
	}
	for _, t := range []string{"encrypted", "peers", "member", "signature", "unsigned", "replay", "later"} {
		m.refused.WithLabelValues(t)
	}
	return m, nil
}
