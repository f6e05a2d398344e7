package state

import "testing"

// memberlist delivers a peer's messages from its own goroutines before
// memberlist.Create returns, so an intro that asks for ours can arrive
// while the cluster has no memberlist yet. Sending then is an error the
// caller retries, never a nil dereference (a panic found under two busy
// loops: introNow -> sendRaw with the memberlist not yet set).
func TestSendBeforeGossipStarted(t *testing.T) {
	c := &Cluster{literal: map[string]string{"ews2": "127.0.0.1:1"}}
	if err := c.sendRaw("ews2", []byte{1, 2, 3}); err == nil {
		t.Fatal("sendRaw before gossip started: no error")
	}
	c.sendTo("ews2", nil, reportMsgType, []byte{1, 2, 3}) // must not panic either
}
