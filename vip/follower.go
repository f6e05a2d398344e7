package vip

// Follower turns the master's view of the cluster into the address's
// state: held while this board is master, and announced again when boards
// come back (a healed partition's clients may have learnt the other
// master's MAC). Its owner serialises the calls.
type Follower struct {
	h  holder // nil: no cluster.vip
	up int    // boards up in the last view seen as master; -1 when not master
}

// holder is what a Follower drives: a Holder.
type holder interface {
	Set(want bool)
	Announce()
}

// NewFollower follows for h (nil: nothing to hold).
func NewFollower(h *Holder) Follower {
	if h == nil {
		return Follower{up: -1} // no typed nil in the interface
	}
	return Follower{h: h, up: -1}
}

// Follow takes a view: whether this board is master, and how many boards
// are up in it.
func (f *Follower) Follow(isMaster bool, up int) {
	if f.h == nil {
		return
	}
	f.h.Set(isMaster)
	if !isMaster {
		f.up = -1
		return
	}
	if f.up >= 0 && up > f.up {
		f.h.Announce()
	}
	f.up = up
}
