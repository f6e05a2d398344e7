package boardpage

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A file another user owns gets the chown that gives it to the user ews
// runs as; a file that does not decode is moved aside.
func TestDiagnoseKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	testutil.WriteFile(t, path, []byte("{}"), 0o600)
	self := currentUser()
	p := diagnoseKept("users", path, fmt.Errorf("users: read %q: %w", path, fs.ErrPermission))
	if p.Owner != self || !strings.Contains(p.Fix, "chown "+self+": "+path) {
		t.Errorf("permission: %+v, want owner %s and its chown", p, self)
	}
	p = diagnoseKept("users", path, fmt.Errorf("users: read %q: bad JSON", path))
	if p.Owner != "" || !strings.Contains(p.Fix, "move "+path+" aside") {
		t.Errorf("bad JSON: %+v", p)
	}
}
