package debpkg

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The packaged service can start CGI programs as ews-cgi (node/cgi's
// DefaultUser), who exists on every install and can reach cgi-bin
// (docs/NOTES.md, Security: CGI as another user): the unit grants
// CAP_SETUID, CAP_SETGID and CAP_KILL (ambient and bounding), the postinst
// and sysusers create the user, and /var/lib/ews lets others pass through.
func TestPackagingRunsCGIAsItsOwnUser(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(packaging, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	unit := read("ews.service")
	for _, key := range []string{"AmbientCapabilities", "CapabilityBoundingSet"} {
		m := regexp.MustCompile(`(?m)^` + key + `=(.*)$`).FindStringSubmatch(unit)
		for _, c := range []string{"CAP_SETUID", "CAP_SETGID", "CAP_KILL"} {
			if m == nil || !strings.Contains(m[1], c) {
				t.Errorf("ews.service %s lacks %s: %q", key, c, m)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^u ews-cgi `).MatchString(read("sysusers.conf")) {
		t.Error("sysusers.conf does not create ews-cgi")
	}
	post := read("scripts/postinst")
	if !strings.Contains(post, "getent passwd ews-cgi") || !regexp.MustCompile(`adduser --system[^\n]*\\\n[^\n]*ews-cgi`).MatchString(post) {
		t.Error("postinst does not create ews-cgi")
	}
	if !strings.Contains(post, `-o root -g ews -m 0771 "${DPKG_ROOT:-}/var/lib/ews"`) || !strings.Contains(read("tmpfiles.conf"), "d /var/lib/ews 0771 root ews") {
		t.Error("/var/lib/ews is not root:ews 0771: ews-cgi could not reach cgi-bin, or tmpfiles could not give ews the restored stores")
	}
	if strings.Contains(read("sysusers.conf"), "m ews-cgi ews") {
		t.Error("ews-cgi is in group ews, which reads /etc/ews/token")
	}
}
