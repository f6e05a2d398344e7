package state

// Capacitor may be implemented by a Local whose slots change while it runs
// ([node] capacity = "auto"): its reports carry Capacity instead of
// Config.Capacity; 0 or less keeps Config.Capacity.
type Capacitor interface {
	Capacity() int
}
