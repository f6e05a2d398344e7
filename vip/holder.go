//go:build !lite

package vip

// Holder is the Manager a board runs; the lite build's holds nothing
// (holder_lite.go), so none of the netlink code is in that binary.
type Holder = Manager

// Open checks at start what holding cfg needs (capabilities, interface):
// a board that cannot hold it says so and does not start. Nil without
// cluster.vip.
func Open(cfg Config, o Options) (*Holder, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	m, err := New(cfg, o)
	if err != nil {
		return nil, err
	}
	if o.Logger != nil {
		o.Logger.Info("vip: held while this board is master", "vip", cfg.Prefix.String(), "interface", m.Interface())
	}
	return m, nil
}
