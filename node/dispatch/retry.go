package dispatch

import (
	"errors"
	"net"
	"syscall"

	"github.com/ews-firmware/ews/sched"
)

// The retry rule: after which failure a request may be sent again, and
// where. It is the one place that decides; the forwarding loop (loop.go)
// carries it out, and the Placer says where the request goes again.

// leg is where an attempt failed.
type leg uint8

const (
	// legBoard: the master sent the request to the board it chose. Sent
	// again: once, to another board the dispatcher chooses (never the one
	// that failed; this board itself if the dispatcher says so).
	legBoard leg = iota
	// legMaster: a follower passed the request to the master. Sent again:
	// to the next master, any but the one that failed at that epoch (the
	// same board at a new epoch is a new master), or run here if this board
	// took over meanwhile; held until one is known, at most MasterWait.
	legMaster
	// legQueue: the request waited in this board's queue, which closed
	// because the board stepped down. Sent again: to the new master.
	legQueue
)

// try is what the retry rule reads of a request and its failed attempt.
type try struct {
	leg        leg
	n          int  // attempts of this leg that failed before this one
	canceled   bool // the client left: nobody reads an answer
	replay     bool // the body can be sent again: there is none, or it is kept in memory (not streamed)
	keyed      bool // Idempotency-Key: the device API runs it at most once, however often it arrives
	idempotent bool // GET or HEAD
	movable    bool // may run on any board (not pinned to the one that failed)
	master     bool // legQueue: this board is master (again) now
}

// verdict is the rule's answer: send again, or which answer the client gets.
type verdict uint8

const (
	sendAgain      verdict = iota // send it again (where: see leg)
	answerCanceled                // 502, counted as canceled: the client is gone
	answerFailed                  // 502: it may have run, and sending it again is not safe
	answerNotRun                  // 503 + Retry-After: it never reached the board, the client may send it again
	answerKeyed                   // 503 + Retry-After: send it again with the same Idempotency-Key
	answerShed                    // the queue's own refusal (503 with its reason, or the client left)
)

var verdictNames = [...]string{"send-again", "canceled", "502", "503-not-run", "503-keyed", "shed"}

func (v verdict) String() string { return verdictNames[v] }

// tryAgain decides after an attempt failed with err (for legQueue, the
// dispatcher's Acquire error):
//   - board (the master's hop): a request that never reached its board
//     (unsent: refused, unreachable, 408 from the board's listener) has not
//     run, and an idempotent GET or HEAD may run twice: either goes once to
//     another board, if it may run anywhere and its body can be sent again.
//     Else: not run → 503 (send it again), keyed → 503 (send it again with
//     the key), else 502;
//   - master (a follower's hop): a request that never reached the master,
//     or one with an Idempotency-Key, goes to the next master if its body
//     can be sent again, as often as masters fail within MasterWait; else 502;
//   - queue: a request still queued when this board stepped down has not
//     been read: it goes to the new master, unless this board is master
//     again; else the queue's answer;
//   - a client that left gets nothing more (502, canceled).
func tryAgain(t try, err error) verdict {
	if t.canceled {
		if t.leg == legQueue {
			return answerShed
		}
		return answerCanceled
	}
	notRun := unsent(err)
	switch t.leg {
	case legQueue:
		var shed *sched.ErrShed
		if errors.As(err, &shed) && shed.Reason == sched.ReasonClosed && !t.master {
			return sendAgain
		}
		return answerShed
	case legMaster:
		if t.replay && (notRun || t.keyed) {
			return sendAgain
		}
		return answerFailed
	}
	if t.n == 0 && t.movable && t.replay && (notRun || t.idempotent) {
		return sendAgain
	}
	return giveUp(t, err)
}

// giveUp is the answer to a request that is not sent again after err:
// tryAgain's answer when it says no, and the master's when the dispatcher
// finds no other board for a retry.
func giveUp(t try, err error) verdict {
	switch {
	case t.canceled:
		return answerCanceled
	case t.leg == legQueue:
		return answerShed
	case t.leg == legMaster:
		return answerFailed
	case unsent(err):
		return answerNotRun
	case t.keyed:
		return answerKeyed
	}
	return answerFailed
}

// unsent reports whether err means the request never reached its target:
// the connection was refused or could not be made, or the target's
// listener gave up on the request header (errHeadTimeout), so nothing ran
// there. A timeout or a connection that died after the request was sent
// is not: the request may have run.
func unsent(err error) bool {
	if errors.Is(err, errHeadTimeout) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
