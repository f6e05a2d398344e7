package sched

// Admission ahead (issue 49): an action for a device that runs one
// operation at a time and is wired to one board may take its slot on that
// board while the device's current operation still runs there. It then
// waits at the board's device lock, holding its slot, and starts the
// moment the device is free, instead of after the running operation's
// answer reached the master and its own forward reached the board (a
// round trip and, under load, a slot wait, every operation: at 57 % of a
// relay's 15 ms that turned a device-bound queue into a much longer one).
// One ahead at a time per device, so a slot is never held waiting behind
// more than one operation, and only while no request waits for a slot (a
// page): under overload the slot held waiting would be taken from the
// pages (measured: a quarter of them at 1.8x, for no control p99 gained). Only an action pinned to the board its
// device's running operation started on: the board's own lock orders the
// two; a device reached from any board (node = "any") could run the two
// on two boards at once. Two actions admitted this way are both in flight
// at once, so either order on the board is one their clients may see.

// aheadFree says whether an action of device di pinned to board index bi
// may take its slot now while the device's one running operation, on bi,
// still runs. The running one must be an action: reads of a device reached
// from any board may run on several boards at once.
func (d *Dispatcher) aheadFree(di int, read bool, bi int) bool {
	if read || bi < 0 || di < 0 {
		return false
	}
	l := &d.locks[d.devs[di].lock]
	return l.conc == 1 && l.busy == 1 && l.readers == 0 && l.last == bi && !d.othersWait()
}

// othersWait reports whether a request waits for a slot rather than for a
// device: then a slot held at a device lock would be taken from it.
func (d *Dispatcher) othersWait() bool {
	n := d.total
	for i := range d.queues {
		n -= d.queues[i].nlocked
	}
	return n > 0
}

// devFreeOn is devFree for a request pinned to board index bi (-1 none):
// free, or admitted ahead.
func (d *Dispatcher) devFreeOn(di int, read bool, bi int) bool {
	return d.devFree(di, read) || d.aheadFree(di, read, bi)
}
