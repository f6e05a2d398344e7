package bootconf

import (
	"reflect"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// config writes out the defaults of the packages that own them (it
// imports none of them): mapped, its defaults are theirs.
func TestConfigDefaultsAreThePackages(t *testing.T) {
	def := config.DefaultConfig()
	st, err := stateConfig(&def)
	if err != nil {
		t.Fatal(err)
	}
	if want := state.DefaultConfig(); !reflect.DeepEqual(st, want) {
		t.Errorf("state defaults:\n got %+v\nwant %+v", st, want)
	}
	sc := schedConfig(&def)
	want := sched.DefaultConfig()
	want.Adaptive, want.Integrated, want.QSC, want.Socket = sc.Adaptive, sc.Integrated, sc.QSC, sc.Socket // empty models: the policies' own
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("sched defaults:\n got %+v\nwant %+v", sc, want)
	}
}

// node.board's values are hal's, spelled in config too.
func TestConfigBoardKindsAreHals(t *testing.T) {
	for c, h := range map[string]string{config.BoardAuto: hal.BoardAuto, config.BoardSim: hal.BoardSim, config.BoardHost: hal.BoardHost} {
		if c != h {
			t.Errorf("config says %q, hal %q", c, h)
		}
	}
}
