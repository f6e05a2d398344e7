package state

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// tlsBoard serves TLS handshakes as a board's HTTPS listener does, with
// id's certificate and protos as its ALPN list, and returns its address.
func tlsBoard(t *testing.T, id *Identity, protos []string) string {
	t.Helper()
	cert := tls.Certificate{Certificate: [][]byte{id.Cert.Raw}, PrivateKey: id.Key, Leaf: id.Cert}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
			}()
		}
	}()
	return ln.Addr().String()
}

// TestAskSeals: a board asked whether it seals answers with the protocol
// its own certificate's handshake chose: this build (SealsALPN first)
// seals, the last build (http/1.1 only) does not. Nobody else can answer
// for it: another board's certificate at its address (an insider with the
// cluster key and its own certificate), a certificate of another cluster,
// and no listener at all are errors, which take nothing back.
func TestAskSeals(t *testing.T) {
	ca, other := clusterCA(t, "main"), clusterCA(t, "other")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name    string
		addr    string
		seals   bool
		wantErr bool
	}{
		{"this build", tlsBoard(t, ca.ids["ews2"], []string{SealsALPN, "http/1.1"}), true, false},
		{"the last build", tlsBoard(t, ca.ids["ews2"], []string{"http/1.1"}), false, false},
		{"the last build, no ALPN", tlsBoard(t, ca.ids["ews2"], nil), false, false},
		{"ews1's certificate at ews2's address", tlsBoard(t, ca.ids["ews1"], []string{"http/1.1"}), false, true},
		{"another cluster's ews2", tlsBoard(t, other.ids["ews2"], []string{"http/1.1"}), false, true},
		{"nothing listening", nobody, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			seals, err := askSeals(ctx, ca.ids["ews3"].Roots, "ews2", c.addr, time.Now())
			if (err != nil) != c.wantErr || seals != c.seals {
				t.Fatalf("askSeals: %v, %v; want seals %v, error %v", seals, err, c.seals, c.wantErr)
			}
		})
	}
}

// TestForget: a board forgotten is taken unsigned again, its key retired,
// and sealing again makes it a sealing board once more.
func TestForget(t *testing.T) {
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	s2 := newKeyring(t, ca.ids["ews2"], "ews2").learn(t, r3)
	r3.learn(t, s2)
	now := time.Now()
	if err := check(r3.g, s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running}), now); err != nil {
		t.Fatal(err)
	}
	unsigned, err := EncodeVersion(&ReportMsg{Name: "ews2", Runstate: Running}, ProtocolVersionUnsigned)
	must(t, err)
	if err := check(r3.g, unsigned, now); err == nil {
		t.Fatal("an unsigned report of a sealing board taken")
	}
	if !r3.g.Forget("ews2") || r3.g.Forget("ews2") {
		t.Fatal("Forget: want true once, then false")
	}
	if err := check(r3.g, unsigned, now); err != nil {
		t.Fatalf("unsigned after Forget: %v", err)
	}
	if err := check(r3.g, mustIntro(t, s2.key), now.Add(time.Second)); err == nil {
		t.Fatal("the forgotten key's intro taken again: it is retired")
	}
}
