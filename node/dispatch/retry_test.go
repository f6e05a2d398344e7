package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/ews-firmware/ews/sched"
)

// Failures as the transport reports them.
var (
	errRefused     = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	errDialTimeout = &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	errNoRoute     = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EHOSTUNREACH)}
	errNetDown     = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ENETUNREACH)}
	errHeadLate    = fmt.Errorf("proxy: %w", errHeadTimeout)
	errReadTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded} // no answer in time: it may have run
	errReset       = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errCutShort    = io.ErrUnexpectedEOF
	errShedClosed  = &sched.ErrShed{Class: "control", Reason: sched.ReasonClosed}
	errShedFull    = &sched.ErrShed{Class: "control", Reason: sched.ReasonFull}
)

// TestTryAgain is the retry rule, case by case: what may be sent again,
// where (the leg), after which failure.
func TestTryAgain(t *testing.T) {
	// a request that may go anywhere and can be sent again, first attempt
	post := try{leg: legBoard, replay: true, movable: true}
	get := post
	get.idempotent = true
	with := func(base try, f func(*try)) try { f(&base); return base }
	follower := try{leg: legMaster, replay: true}
	queued := try{leg: legQueue}

	tests := []struct {
		name string
		try  try
		err  error
		want verdict
	}{
		// the master's hop to a board
		{"board refused: POST never ran, another board", post, errRefused, sendAgain},
		{"board dial timed out: never ran, another board", post, errDialTimeout, sendAgain},
		{"board unreachable (no route): never ran", post, errNoRoute, sendAgain},
		{"board's network down: never ran", post, errNetDown, sendAgain},
		{"board's listener 408 (header late): never ran", post, errHeadLate, sendAgain},
		{"board timed out, POST may have run: 502", post, errReadTimeout, answerFailed},
		{"board reset, POST: 502", post, errReset, answerFailed},
		{"board cut the answer short, POST: 502", post, errCutShort, answerFailed},
		{"board refused the transport's resend, POST: 502", post, errResent, answerFailed},
		{"board timed out, keyed POST: 503, send it again with the key", with(post, func(t *try) { t.keyed = true }), errReadTimeout, answerKeyed},
		{"board reset, GET: another board", get, errReset, sendAgain},
		{"board timed out, HEAD: another board", get, errReadTimeout, sendAgain},
		{"board refused the resend, GET: another board", get, errResent, sendAgain},
		{"second attempt failed too, GET: 502", with(get, func(t *try) { t.n = 1 }), errReset, answerFailed},
		{"second attempt refused too: 503, it never ran", with(post, func(t *try) { t.n = 1 }), errRefused, answerNotRun},
		{"second attempt timed out, keyed: 503 with the key", with(post, func(t *try) { t.n, t.keyed = 1, true }), errReadTimeout, answerKeyed},
		{"pinned board refused: 503, never elsewhere", with(post, func(t *try) { t.movable = false }), errRefused, answerNotRun},
		{"pinned board reset, GET: 502", with(get, func(t *try) { t.movable = false }), errReset, answerFailed},
		{"pinned board timed out, keyed: 503 with the key", with(post, func(t *try) { t.movable, t.keyed = false, true }), errReadTimeout, answerKeyed},
		{"streamed body (consumed), refused: 503, the client sends it again", with(post, func(t *try) { t.replay = false }), errRefused, answerNotRun},
		{"streamed body (consumed), GET reset: 502", with(get, func(t *try) { t.replay = false }), errReset, answerFailed},
		{"streamed body, keyed, timed out: 503 with the key", with(post, func(t *try) { t.replay, t.keyed = false, true }), errReadTimeout, answerKeyed},
		{"client left while the board worked", with(get, func(t *try) { t.canceled = true }), context.Canceled, answerCanceled},
		{"client left, board refused: still nothing to answer", with(post, func(t *try) { t.canceled = true }), errRefused, answerCanceled},

		// a follower's hop to the master
		{"master refused: the next master", follower, errRefused, sendAgain},
		{"master unreachable: the next master", follower, errNoRoute, sendAgain},
		{"master's listener 408: the next master", follower, errHeadLate, sendAgain},
		{"master failed again (the next one refused too): the one after", with(follower, func(t *try) { t.n = 3 }), errRefused, sendAgain},
		{"master timed out, POST may have run: 502", follower, errReadTimeout, answerFailed},
		{"master reset, GET may have run: 502 (no GET rule on this hop)", with(follower, func(t *try) { t.idempotent = true }), errReset, answerFailed},
		{"master timed out, keyed: the next master (the key makes it safe)", with(follower, func(t *try) { t.keyed = true }), errReadTimeout, sendAgain},
		{"master refused, streamed body: 502", with(follower, func(t *try) { t.replay = false }), errRefused, answerFailed},
		{"master reset, keyed, streamed body: 502", with(follower, func(t *try) { t.replay, t.keyed = false, true }), errReset, answerFailed},
		{"client left while the master worked", with(follower, func(t *try) { t.canceled, t.keyed = true, true }), errRefused, answerCanceled},

		// a request queued on a master that stepped down
		{"queue closed: the new master", queued, errShedClosed, sendAgain},
		{"queue closed, this board is master again: the queue's 503", with(queued, func(t *try) { t.master = true }), errShedClosed, answerShed},
		{"queue full: the queue's 503", queued, errShedFull, answerShed},
		{"client left while queued", with(queued, func(t *try) { t.canceled = true }), errShedClosed, answerShed},
		{"not a shed (a dispatcher fault): its answer", queued, errors.New("boom"), answerShed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tryAgain(tt.try, tt.err); got != tt.want {
				t.Fatalf("tryAgain(%+v, %v) = %v, want %v", tt.try, tt.err, got, tt.want)
			}
		})
	}
}

// TestGiveUp is the answer of a request that is not sent again, and of a
// retry the dispatcher found no board for.
func TestGiveUp(t *testing.T) {
	tests := []struct {
		name string
		try  try
		err  error
		want verdict
	}{
		{"board refused, no board for the retry: 503, it never ran", try{leg: legBoard, movable: true, replay: true}, errRefused, answerNotRun},
		{"GET reset, no board for the retry: 502", try{leg: legBoard, movable: true, replay: true, idempotent: true}, errReset, answerFailed},
		{"keyed GET reset, no board for the retry: 503 with the key", try{leg: legBoard, movable: true, replay: true, idempotent: true, keyed: true}, errReset, answerKeyed},
		{"client left", try{leg: legBoard, canceled: true}, errRefused, answerCanceled},
		{"follower: 502 whatever the failure", try{leg: legMaster, keyed: true}, errRefused, answerFailed},
		{"queue: its own answer", try{leg: legQueue}, errShedClosed, answerShed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := giveUp(tt.try, tt.err); got != tt.want {
				t.Fatalf("giveUp(%+v, %v) = %v, want %v", tt.try, tt.err, got, tt.want)
			}
		})
	}
}
