package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckOutputDir(t *testing.T) {
	dir := t.TempDir()
	if err := Check(filepath.Join(dir, "new"), false); err != nil {
		t.Fatalf("missing dir: %v", err)
	}
	if err := Check(dir, false); err != nil {
		t.Fatalf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	if err := Check(dir, false); !errors.Is(err, ErrExists) {
		t.Fatalf("non-empty dir: %v", err)
	}
	if err := Check(dir, true); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("force on a directory rpca did not write: %v", err)
	}
	os.WriteFile(filepath.Join(dir, OwnerMarker), nil, 0o644)
	if err := Check(dir, true); err != nil {
		t.Fatalf("force: %v", err)
	}
	if err := Check(filepath.Join(dir, "f"), true); err == nil {
		t.Fatal("a file accepted as output directory")
	}
}
