package config

import (
	"strings"
	"testing"
)

func TestMaxAgeRefused(t *testing.T) {
	for _, tc := range []struct{ value, msg string }{
		{`"soon"`, "want a duration"},
		{`"-5ms"`, "negative"},
		{`5`, ""},
	} {
		errs := problems(t, "[node]\nname = \"ews1\"\n[[device]]\nname = \"t1\"\ndriver = \"sim-sensor\"\nmax_age = "+tc.value+"\n")
		if len(errs) != 1 || errs[0].Line != 6 || !strings.Contains(errs[0].Key, "max_age") || !strings.Contains(errs[0].Msg, tc.msg) {
			t.Errorf("max_age = %s: got %v, want one problem on line 6 (device[0].max_age) mentioning %q", tc.value, errs, tc.msg)
		}
	}
}
