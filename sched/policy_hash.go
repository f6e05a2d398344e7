package sched

import "math/rand/v2"

// SourceHash sends each client address to the same board by rendezvous
// hashing, so a board leaving moves only its own clients. A request without
// a client address goes to the least linknum.
type SourceHash struct{}

// Select picks the board with the highest hash of (client, board).
func (SourceHash) Select(pool []*Board, req *Request) *Board {
	if req == nil || !req.Client.IsValid() {
		return leastBy(pool, nil, byLinknum)
	}
	return rendezvous(pool, addrKey(req))
}

// DestHash sends each URL path to the same board by rendezvous hashing
// (cache locality for pages and data queries).
type DestHash struct{}

// Select picks the board with the highest hash of (path, board).
func (DestHash) Select(pool []*Board, req *Request) *Board {
	if req == nil {
		return leastBy(pool, nil, byLinknum)
	}
	return rendezvous(pool, fnvString(fnvOffset, req.Path))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix64 is the splitmix64 finalizer: it spreads FNV's weak low bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func addrKey(req *Request) uint64 {
	a := req.Client.Unmap().As16()
	h := uint64(fnvOffset)
	for _, c := range a {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// rendezvous returns the board with the highest score hash(key, name); equal
// scores (practically never) go to the smaller name so the choice is stable.
func rendezvous(pool []*Board, key uint64) *Board {
	var best *Board
	var bestScore uint64
	for _, b := range pool {
		s := mix64(fnvString(key, b.Name))
		if best == nil || s > bestScore || (s == bestScore && b.Name < best.Name) {
			best, bestScore = b, s
		}
	}
	return best
}

// RendezvousPick returns the name with the highest rendezvous score for key
// (the same hash the hash policies use), "" for no names. Adding or
// removing a name moves only the keys of that name.
func RendezvousPick(key string, names []string) string {
	k := fnvString(fnvOffset, key)
	best, bestScore := "", uint64(0)
	for _, n := range names {
		s := mix64(fnvString(k, n))
		if best == "" || s > bestScore || (s == bestScore && n < best) {
			best, bestScore = n, s
		}
	}
	return best
}

func init() {
	RegisterPolicy(PolicySpec{Name: "source-hash", Queue: PriorityQueues,
		New: func(Config, *rand.Rand) Policy { return SourceHash{} }})
	RegisterPolicy(PolicySpec{Name: "dest-hash", Queue: PriorityQueues,
		New: func(Config, *rand.Rand) Policy { return DestHash{} }})
}
