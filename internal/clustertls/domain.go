package clustertls

import (
	"fmt"
	"strings"
)

// CheckDomain refuses a DNS suffix a cluster CA should not be scoped to:
// one that is not a DNS name (labels of a-z, 0-9 and -, 1 to 63 each, not
// starting or ending with -, 253 in all), or that has a single label
// ("lan", "local", "com"), which would let the CA certify every name under
// it, the LAN's printers and routers included, to every browser that
// trusts it. The error says which and why.
func CheckDomain(d string) error {
	if d == "" {
		return fmt.Errorf("clustertls: an empty DNS suffix")
	}
	if len(d) > 253 {
		return fmt.Errorf("clustertls: DNS suffix %.40q…: longer than 253 characters", d)
	}
	labels := strings.Split(d, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("clustertls: DNS suffix %q: %v", d, err)
		}
	}
	if len(labels) < 2 {
		return fmt.Errorf("clustertls: DNS suffix %q has one label: the CA could then certify every name under it (the LAN's other devices too); give one only the boards use, such as ews.%s", d, d)
	}
	return nil
}

// checkLabel is the rule of one DNS label, lower case.
func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("an empty label (two dots, or a dot at an end)")
	case len(l) > 63:
		return fmt.Errorf("label %.20q… is longer than 63 characters", l)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with -", l)
	}
	for _, c := range l {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("label %q has %q: only a-z, 0-9 and - are allowed", l, c)
		}
	}
	return nil
}
