package enrol

import (
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	code, err := NewCode()
	if err != nil || !Valid(code) {
		t.Fatalf("code %q: %v", code, err)
	}
	other, _ := NewCode()
	id, sealed, err := Seal(code, []byte("the board bundle"))
	if err != nil || !ValidID(id) || id != ID(code) || id == ID(other) {
		t.Fatalf("seal: %q %v", id, err)
	}
	typed := strings.ToLower(Show(code)) // as a person types it back
	if got, err := Open(Normalise(typed), sealed); err != nil || string(got) != "the board bundle" {
		t.Fatalf("open with the typed code: %q %v", got, err)
	}
	flipped := []byte(sealed)
	flipped[len(flipped)/2] ^= 1
	for _, c := range []struct {
		name, code, sealed string
	}{
		{"another code", other, sealed},
		{"altered on the way", code, string(flipped)},
		{"not base64", code, "%%%"},
		{"too short", code, "AAAA"},
		{"not a code", "SHORT", sealed},
		{"too long", code, strings.Repeat("A", MaxSealed+1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := Open(c.code, c.sealed); err == nil {
				t.Fatalf("opened %q", got)
			}
		})
	}
}

func TestNormalise(t *testing.T) {
	for in, want := range map[string]string{
		"abcd-efgh-jkmn-pqrs": "ABCDEFGHJKMNPQRS",
		"O0 Il1":              "00111",
	} {
		if got := Normalise(in); got != want {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, want)
		}
	}
	for _, id := range []string{"", "ABCDEF0123456789abcdef0123456789", strings.Repeat("g", IDLen)} {
		if ValidID(id) {
			t.Errorf("ValidID(%q)", id)
		}
	}
}
