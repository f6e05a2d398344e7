// Package state owns the replicated cluster table: its types, msgpack codec, memberlist transport and master election.
package state
