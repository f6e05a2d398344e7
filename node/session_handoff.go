package node

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// EnvSessionSecret carries a standalone board's random session key to the
// process that replaces it on a restart or upgrade (exec in place, or the
// upgrade supervisor's child). It is read once at start and removed from
// the environment, so no CGI program, health check or helper inherits it.
const EnvSessionSecret = "EWS_SESSION_SECRET"

// sessionFromEnv takes the key a previous process of this board handed
// over, or makes a new random one.
func sessionFromEnv() ([]byte, error) {
	if v := os.Getenv(EnvSessionSecret); v != "" {
		_ = os.Unsetenv(EnvSessionSecret)
		k, err := hex.DecodeString(v)
		if err == nil && len(k) == 32 {
			return k, nil
		}
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("node: session key: %w", err)
	}
	return k, nil
}

// SessionHandoff is the environment entry ("EWS_SESSION_SECRET=...") that
// keeps this board's sessions valid across a restart it starts itself; ""
// when its session key comes from the bundle or the cluster key (stable
// already). A restart by systemd starts without it: sessions of a
// standalone board without a bundle end then.
func (n *Node) SessionHandoff() string {
	if !n.sec.handoff {
		return ""
	}
	return EnvSessionSecret + "=" + hex.EncodeToString(n.sec.session)
}
