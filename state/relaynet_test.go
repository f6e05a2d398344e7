package state

import "slices"

// The simulation's model of a relayed cluster's gossip (relay.go), as
// memberlist runs it: every gossip interval (here one tick, as
// memberlistConfig sets it for a relayed cluster) each board with
// something queued picks gossipNodes boards at random (any board but
// itself, down ones included: failure detection is not modelled) and sends
// each one packet of what its TransmitLimitedQueue gives for the space
// (GetBroadcasts with memberlist's own overhead and limit), compound-framed
// as memberlist frames it; each packet is checked against the MTU and lost
// at the net's loss rate. Not modelled: memberlist's own membership
// broadcasts sharing the packets, probes and acks, push-pull, and the
// time a packet takes beyond the next tick.

// gossipNodes is memberlist's GossipNodes (its default, kept).
const gossipNodes = 3

// join tells n of every board up and every board up of n, as memberlist's
// join and push-pull do.
func (s *simNet) join(n *simNode) {
	n.q = newRelayQueue(func() int { return len(s.nodes) })
	n.boot, n.seq = uint64(s.now.UnixNano()), 0
	for _, o := range s.nodes {
		if o != n && o.up && o.e != nil {
			n.e.MemberJoined(o.name)
			o.e.MemberJoined(n.name)
		}
	}
}

// gossip queues n's own message m to be passed on, and sends it at once
// to the boards named in also, or to every board with all.
func (s *simNet) gossip(n *simNode, m Message, all bool, also []string) {
	n.seq++
	b, err := wrapRelay(n.name, n.boot, n.seq, m, nil)
	if err != nil {
		s.t.Fatalf("%s: relay %s: %v", n.name, m.Type(), err)
	}
	n.q.fresh(&RelayMsg{Origin: n.name, Boot: n.boot, Seq: n.seq})
	n.q.push(n.name, m.Type(), b)
	s.sent[m.Type()]++
	for _, to := range s.nodes {
		if to == n || !(all || slices.Contains(also, to.name)) {
			continue
		}
		s.bytes[n.name] += len(b)
		s.packets[n.name]++
		if s.udp(len(b)+1+gcmOverhead) && to.up && !s.cut[[2]string{n.name, to.name}] {
			to.inbox = append(to.inbox, b)
		}
	}
}

// relayed takes a RelayMsg n received: nil when n had it already,
// otherwise passed on and the message it carries.
func (s *simNet) relayed(n *simNode, r *RelayMsg, b []byte) Message {
	if n.q == nil || !n.q.fresh(r) {
		return nil
	}
	m, err := unwrapRelay(r)
	if err != nil {
		s.t.Fatalf("%s: relayed message of %s: %v", n.name, r.Origin, err)
	}
	n.q.push(r.Origin, m.Type(), b)
	return m
}

// spread is one gossip interval: every live board sends its packets.
func (s *simNet) spread() {
	for _, n := range s.nodes {
		if !n.up || n.q == nil || n.q.q.NumQueued() == 0 {
			continue
		}
		if s.cpu != nil {
			t0 := threadCPU()
			s.spreadFrom(n)
			s.cpu[n.name] += threadCPU() - t0
			continue
		}
		s.spreadFrom(n)
	}
}

func (s *simNet) spreadFrom(n *simNode) {
	for range gossipNodes {
		to := s.nodes[s.rng.IntN(len(s.nodes)-1)]
		if to == n {
			to = s.nodes[len(s.nodes)-1] // any board but n, evenly
		}
		msgs := n.q.GetBroadcasts(2+1, relayPacket) // compoundOverhead + userMsgOverhead, as memberlist's getBroadcasts
		if len(msgs) == 0 {
			return
		}
		size := len(msgs[0]) + 1
		if len(msgs) > 1 {
			size = 2
			for _, m := range msgs {
				size += 2 + 1 + len(m)
			}
		}
		s.bytes[n.name] += size
		s.packets[n.name]++
		if !s.udp(size+gcmOverhead) || !to.up || s.cut[[2]string{n.name, to.name}] {
			continue
		}
		to.inbox = append(to.inbox, msgs...)
	}
}
