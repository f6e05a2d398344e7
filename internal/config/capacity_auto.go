package config

// CapacityAuto is the value of [node] capacity that lets the board's slots
// follow what it completes (sched.AutoCapacity); the board starts with the
// default capacity and reports what the measurement gives.
const CapacityAuto = "auto"

// takeCapacityAuto removes node.capacity = "auto" from a decoded document,
// so the strict decoder sees an integer key or none, and reports whether
// it was there. Any other string stays, for the decoder to refuse with
// its line.
func takeCapacityAuto(doc map[string]any) bool {
	node, ok := doc["node"].(map[string]any)
	if !ok {
		return false
	}
	if v, ok := node["capacity"].(string); ok && v == CapacityAuto {
		delete(node, "capacity")
		return true
	}
	return false
}
