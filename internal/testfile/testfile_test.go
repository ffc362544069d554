package testfile

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := Write(t, dir, "a.txt", "1 2\n")
	if p != filepath.Join(dir, "a.txt") {
		t.Errorf("path %q", p)
	}
	if b := Read(t, p); string(b) != "1 2\n" {
		t.Errorf("read %q", b)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"c", "a", ".marker", "b"} {
		Write(t, dir, n, "")
	}
	if got := List(t, dir, ".marker"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("List = %q", got)
	}
	if got := List(t, dir); len(got) != 4 {
		t.Errorf("List without skip = %q", got)
	}
}

func TestWriteWith(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "x.txt")
	WriteWith(t, p, func(w io.Writer) error { _, err := io.WriteString(w, "abc"); return err })
	if b, err := os.ReadFile(p); err != nil || string(b) != "abc" {
		t.Errorf("read %q, %v", b, err)
	}
}
