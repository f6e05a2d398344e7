package devpath

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		method, path string
		name         string
		read         bool
	}{
		{"POST", "/api/devices/s1/read", "s1", true},
		{"POST", "/api/devices/r1/toggle", "r1", false},
		{"POST", "/api/devices/r1/set", "r1", false},
		{"POST", "/api/devices/r1/explode", "", false},
		{"GET", "/api/devices/s1/read", "", false},
		{"POST", "/api/devices//read", "", false},
		{"POST", "/api/devices/s1", "", false},
		{"POST", "/api/cluster", "", false},
	} {
		name, read := Of(c.method, c.path)
		if name != c.name || read != c.read {
			t.Errorf("Of(%s %s) = %q, %v; want %q, %v", c.method, c.path, name, read, c.name, c.read)
		}
	}
}
