package devsync

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/events"
)

func seqSnap(name, node, state string, seq uint64) hal.Snapshot {
	s := snap(name, node, state, time.Unix(1, 0))
	s.Seq = seq
	return s
}

// TestRememberHighestSeq: the memory follows commands (Seq), not a board's
// state at boot, so a restarted board's initial "off" does not erase it.
func TestRememberHighestSeq(t *testing.T) {
	m := New("ews1", nil, Options{})
	m.replace("ews2", []hal.Snapshot{seqSnap("r2", "ews2", hal.StateOff, 0)})
	if got := m.Remembered(); len(got) != 0 {
		t.Fatalf("a state no command set is remembered: %v", got)
	}
	m.update("ews2", seqSnap("r2", "ews2", hal.StateOn, 10))
	m.update("ews2", seqSnap("r2", "ews2", hal.StateOff, 9)) // older: ignored
	// ews2 restarts: its boot list has r2 off and no seq
	m.replace("ews2", []hal.Snapshot{seqSnap("r2", "ews2", hal.StateOff, 0)})
	got := m.Remembered()
	if len(got) != 1 || got[0].State != hal.StateOn || got[0].Seq != 10 {
		t.Fatalf("Remembered = %+v, want r2 on at seq 10", got)
	}
	// a board may not make us remember a third board's output or a shared one
	m.update("ews2", seqSnap("r3", "ews3", hal.StateOn, 50))
	m.update("ews2", seqSnap("bus", "any", hal.StateOn, 50))
	if got := m.Remembered(); len(got) != 1 {
		t.Fatalf("Remembered = %+v, want only r2", got)
	}
	// the board's full list no longer has r2 (removed from its config): dropped
	m.replace("ews2", []hal.Snapshot{seqSnap("r9", "ews2", hal.StateOff, 0)})
	if got := m.Remembered(); len(got) != 0 {
		t.Fatalf("Remembered = %+v after ews2 dropped r2, want nothing", got)
	}
}

func TestOffersOnlyOwnOutputs(t *testing.T) {
	m := New("ews2", nil, Options{})
	data, _ := json.Marshal([]hal.Snapshot{seqSnap("r2", "ews2", hal.StateOn, 10), seqSnap("r3", "ews3", hal.StateOn, 11)})
	if _, err := m.apply("ews1", event{name: "outputs", data: data}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.apply("ews3", event{name: "outputs", data: []byte("{bad")}); err == nil {
		t.Error("bad outputs JSON accepted")
	}
	m.offer("ews3", nil)
	got := m.Offers()
	if len(got["ews1"]) != 1 || got["ews1"][0].Name != "r2" {
		t.Errorf("offer of ews1 = %+v, want only r2", got["ews1"])
	}
	if l, ok := got["ews3"]; !ok || len(l) != 0 {
		t.Errorf("offer of ews3 = %v %v, want an empty answer", l, ok)
	}
}

// TestOfferOverStream: a board's stream that sends "outputs" first gives
// its memory; one that sends only "devices" (older firmware) counts as an
// empty answer, so a restarting board does not wait for it.
func TestOfferOverStream(t *testing.T) {
	devs3 := openDevices(t, "ews3")
	old := startBoard(t, devs3, "127.0.0.1:0")
	b1 := startBoardSetup(t, openDevices(t, "ews1"), "127.0.0.1:0", func(h *events.Hub) {
		h.Snapshot("outputs", func() any { return []hal.Snapshot{seqSnap("r2", "ews2", hal.StateOn, 77)} })
	})
	var peers peerList
	peers.set(Peer{Name: "ews1", HTTP: b1.addr()}, Peer{Name: "ews3", HTTP: old.addr()})
	m := New("ews2", peers.get, fastOptions(&recorder{}))
	run(t, m)
	m.Poke()
	deadline := time.Now().Add(5 * time.Second)
	for len(m.Offers()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("offers %v after 5s, want ews1 and ews3", m.Offers())
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	got := m.Offers()
	if len(got["ews1"]) != 1 || got["ews1"][0].Seq != 77 || len(got["ews3"]) != 0 {
		t.Errorf("offers = %+v", got)
	}
}
