//go:build lite

package vip

import "context"

// Holder is left out of the lite build (docs/NOTES.md "The lite build"): a
// lite board never holds cluster.vip, which node's leftOut refuses.
type Holder struct{}

// Open holds nothing.
func Open(Config, Options) (*Holder, error) { return nil, nil }

func (*Holder) Run(context.Context) error { return nil }
func (*Holder) Close()                    {}
func (*Holder) Set(bool)                  {}
func (*Holder) Announce()                 {}
