package state

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the cluster's Prometheus series. Bytes count our own
// messages (tables, reports...), not memberlist's probes and gossip.
type metrics struct {
	epoch     prometheus.Gauge
	isMaster  prometheus.Gauge
	takeovers prometheus.Counter
	version   prometheus.Gauge
	sent      *prometheus.CounterVec // type
	received  *prometheus.CounterVec // type
	refused   *prometheus.CounterVec // type: table report stepdown peerlist unknown encrypted overflow peers member
	bytes     *prometheus.CounterVec // direction: sent received
	wire      prometheus.Counter     // every UDP byte sent, memberlist's own included
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		epoch:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "ews_cluster_epoch", Help: "Epoch of the master this board follows (or is)."}),
		isMaster:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "ews_cluster_is_master", Help: "1 while this board is the master."}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "ews_cluster_takeovers_total", Help: "Times this board claimed mastership."}),
		version:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "ews_cluster_table_version", Help: "Version of the latest table."}),
		sent:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ews_cluster_messages_sent_total", Help: "Cluster messages sent, by type (one per receiver)."}, []string{"type"}),
		received:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ews_cluster_messages_received_total", Help: "Cluster messages received and accepted, by type."}, []string{"type"}),
		refused:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ews_cluster_messages_refused_total", Help: "Cluster messages refused, by type; encrypted = gossip that no installed key decrypts; peers = the sender's peer list differs (also counted by type); member = a board whose name and address do not match cluster.peers."}, []string{"type"}),
		bytes:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ews_cluster_gossip_bytes_total", Help: "Bytes of cluster messages (before encryption), by direction."}, []string{"direction"}),
		wire:      prometheus.NewCounter(prometheus.CounterOpts{Name: "ews_cluster_wire_bytes_sent_total", Help: "UDP bytes sent by the gossip transport, memberlist's probes and gossip included, after encryption."}),
	}
	for _, t := range []string{"table", "report", "stepdown", "peerlist"} {
		m.sent.WithLabelValues(t)
		m.received.WithLabelValues(t)
		m.refused.WithLabelValues(t)
	}
	for _, t := range []string{"encrypted", "peers", "member"} {
		m.refused.WithLabelValues(t)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.epoch, m.isMaster, m.takeovers, m.version, m.sent, m.received, m.refused, m.bytes, m.wire} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, errors.New("state: cluster metrics are already registered (one Cluster per registry)")
			}
			return nil, err
		}
	}
	return m, nil
}
