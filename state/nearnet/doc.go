// Package nearnet is 003's dynamic proximity table (scheme 3): a board's round trips to its clients' networks, their wire form in gossip, and the master's table of every board's nearest networks.
package nearnet
