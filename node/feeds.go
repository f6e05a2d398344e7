package node

import (
	"context"
	"encoding/json"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/clusterview"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/liveconf"
	"github.com/ews-firmware/ews/state"
)

// deviceList is every device of the cluster with the freshest state this
// board has: its own live, the others' as mirrored.
func (n *Node) deviceList() []hal.Snapshot {
	list := n.dev.devs.List()
	if n.dev.mirror != nil {
		return n.dev.mirror.Merge(list)
	}
	return list
}

// publish feeds the hubs until ctx ends: device changes of this board
// (from watch, taken before the hubs serve), and the cluster table with
// takeovers, which also keep the master's dispatcher in step
// (master.follow). It returns nil.
func (n *Node) publish(ctx context.Context, watch func(context.Context, func(hal.Snapshot))) error {
	var prev string
	var prevEpoch uint64
	tables := events.NewCoalescer(n.web.hub, "cluster", clusterview.Key, events.CoalesceOptions{})
	cancel := n.clu.cluster.OnChange(func(v state.View) {
		n.clu.master.follow(v)
		// the mirror follows a board as soon as the table knows its
		// address, as the dispatcher does, not up to a Refresh later: a
		// change on a board the master already sends work to (a button
		// pressed) would otherwise reach neither the rules nor the UI
		if n.dev.mirror != nil {
			n.dev.mirror.Poke()
		}
		n.clu.auto.Poke()
		tables.Offer(n.clu.view.Refusals(v))
		if v.Master != "" && (v.Master != prev || v.Epoch != prevEpoch) {
			if prev != "" {
				n.web.hub.Publish("takeover", map[string]any{"epoch": v.Epoch, "master": v.Master, "previous": prev})
				n.log.Info("new master", "master", v.Master, "epoch", v.Epoch, "previous", prev)
			}
			prev, prevEpoch = v.Master, v.Epoch
		}
	})
	defer func() { cancel(); tables.Close() }()
	watch(ctx, func(s hal.Snapshot) {
		n.web.hub.Publish("device", s)
		n.web.localHub.Publish("device", s)
		n.clu.auto.Observe(s)
	})
	<-ctx.Done() // Watch also ends when the devices close
	return nil
}

// remoteEvent takes the other events of a board's local stream: its
// Idempotency-Key claims and its logouts.
func (n *Node) remoteEvent(board, event string, data []byte) {
	switch event {
	case "revoke", "revoked": // a logout there, or every one it holds
		if err := n.acc.auth.RevokeEvent(event, data); err != nil {
			n.log.Warn("devsync: bad session revocation", "board", board, "err", err)
			return
		}
		n.acc.revoked.Save(n.acc.auth.Revoked())
		return
	case "authfail": // a failed credential check there counts here too (docs/NOTES.md "Brute force")
		var f auth.Failure
		if err := json.Unmarshal(data, &f); err == nil {
			n.acc.auth.Failed(f)
		}
		return
	case "users": // the users store, replicated from the master
		access.Remote(n.acc.acct.Store, board, data, n.log)
		return
	case "config": // what the board made of the store's version (node/liveconf)
		var st liveconf.Status
		if err := json.Unmarshal(data, &st); err == nil {
			n.acc.live.Remote(board, st)
		}
		return
	case "idempotency":
	default:
		return
	}
	var c devapi.Claim
	if err := json.Unmarshal(data, &c); err != nil {
		n.log.Warn("devsync: bad idempotency claim", "board", board, "err", err)
		return
	}
	c.Board = board
	n.dev.api.Remember(c)
}
