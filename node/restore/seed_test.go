package restore

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSeedOnce(t *testing.T) {
	dir, marks := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "ews-outputs.json")
	if s, err := LoadSeed(p, marks); s != nil || err != nil {
		t.Fatalf("no file: %v %v", s, err)
	}
	data := []byte(`[{"name":"relay1","node":"ews2","state":"on","value":true,"seq":9}]`)
	os.WriteFile(p, data, 0o644)
	s, err := LoadSeed(p, marks)
	if err != nil || len(s) != 1 || s[0].Seq != 9 {
		t.Fatalf("LoadSeed = %v %v", s, err)
	}
	if err := UseSeed(p, marks); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + ".used"); err != nil {
		t.Errorf("not set aside: %v", err)
	}
	if s, _ := LoadSeed(p, marks); s != nil {
		t.Errorf("taken twice: %v", s)
	}
	// a seed the board could not rename (a read-only boot partition) is
	// skipped by its mark; a new backup's seed (other content) is taken
	os.WriteFile(p, data, 0o644)
	os.WriteFile(filepath.Join(marks, usedMark), []byte(sum(data)+"\n"), 0o644)
	if s, _ := LoadSeed(p, marks); s != nil {
		t.Errorf("a marked seed taken again: %v", s)
	}
	os.WriteFile(p, append(data, ' '), 0o644)
	if s, _ := LoadSeed(p, marks); len(s) != 1 {
		t.Errorf("a new seed not taken: %v", s)
	}
	os.WriteFile(p, []byte("{bad"), 0o644)
	if _, err := LoadSeed(p, ""); err == nil {
		t.Error("bad JSON accepted")
	}
}
