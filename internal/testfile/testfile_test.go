package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := Write(t, dir, "a.txt", "1 2\n")
	if p != filepath.Join(dir, "a.txt") {
		t.Errorf("path %q", p)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "1 2\n" {
		t.Errorf("read %q, %v", b, err)
	}
}
