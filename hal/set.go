package hal

// deviceSet is the devices of one version of the config as this board
// sees them. It is never changed once published: Apply builds the next
// one and swaps the pointer (copy-on-write, docs/NOTES.md "Configuration
// store"), so the request path reads it with one atomic load and no lock.
type deviceSet struct {
	order  []string            // every device name, config order
	local  map[string]*Device  // wired to this board and open
	remote map[string]Snapshot // wired to another board
	failed map[string]Snapshot // wired to this board, but its driver did not open (state "error")
}

func newDeviceSet() *deviceSet {
	return &deviceSet{local: map[string]*Device{}, remote: map[string]Snapshot{}, failed: map[string]Snapshot{}}
}

// devices is the current set.
func (ds *Devices) devices() *deviceSet { return ds.set.Load() }
