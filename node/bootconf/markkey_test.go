package bootconf

import (
	"bytes"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

func TestMarkKey(t *testing.T) {
	withKey := func(key string) *config.Config {
		c := config.DefaultConfig()
		c.Cluster.Peers = []string{"ews1=h:1", "ews2=h:2"}
		c.Cluster.Key = key
		c.Cluster.Insecure = key == ""
		return &c
	}
	mk := func(c *config.Config) ([]byte, string, error) { return MarkKey(bootOf(t, c)) }
	k1 := config.NewKey()
	a, noteA, err := mk(withKey(k1))
	if err != nil || noteA != "" || len(a) != 32 {
		t.Fatalf("cluster key: %d bytes, note %q, %v", len(a), noteA, err)
	}
	b, _, _ := mk(withKey(k1))
	c, _, _ := mk(withKey(config.NewKey()))
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("mark key is not a function of the cluster key")
	}
	raw, _ := config.DecodeKey(k1)
	if bytes.Equal(a, raw) {
		t.Fatal("mark key equals the gossip key")
	}
	i1, note, err := mk(withKey(""))
	i2, _, _ := mk(withKey(""))
	if err != nil || note == "" || !bytes.Equal(i1, i2) {
		t.Fatalf("insecure: note %q, equal %v, %v", note, bytes.Equal(i1, i2), err)
	}
	sa := config.DefaultConfig()
	s1, _, err := mk(&sa)
	s2, _, _ := mk(&sa)
	if err != nil || len(s1) != 32 || bytes.Equal(s1, s2) {
		t.Fatalf("standalone key: want random 32 bytes (%v)", err)
	}
}
