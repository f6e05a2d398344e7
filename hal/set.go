package hal

import "maps"

// deviceSet is the devices of one version of the config as this board
// sees them. It is never changed once published: Apply builds the next
// one and swaps the pointer (copy-on-write, docs/NOTES.md "Configuration
// store"), so the request path reads it with one atomic load and no lock.
type deviceSet struct {
	order  []string              // every device name, config order
	specs  map[string]DeviceSpec // every device's spec as configured
	local  map[string]*Device    // wired to this board and open
	remote map[string]Snapshot   // wired to another board
	failed map[string]Snapshot   // wired to this board, but its driver did not open (state "error")
}

func newDeviceSet() *deviceSet {
	return &deviceSet{specs: map[string]DeviceSpec{}, local: map[string]*Device{}, remote: map[string]Snapshot{}, failed: map[string]Snapshot{}}
}

// clone is a copy whose maps may be changed without touching s.
func (s *deviceSet) clone() *deviceSet {
	return &deviceSet{order: append([]string(nil), s.order...), specs: maps.Clone(s.specs),
		local: maps.Clone(s.local), remote: maps.Clone(s.remote), failed: maps.Clone(s.failed)}
}

// devices is the current set.
func (ds *Devices) devices() *deviceSet { return ds.set.Load() }
