// Package testfile writes the small input files that tests across the
// module feed to loaders and to the command line.
package testfile

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Write writes text into the file name of dir, failing the test if it
// cannot, and returns the file's path.
func Write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteWith creates the file path, and its parent directories, and fills
// it with write, failing the test on any error.
func WriteWith(t testing.TB, path string, write func(w io.Writer) error) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Read returns the contents of the file path, failing the test if it
// cannot be read.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// List returns the names in dir, sorted, without those in skip, failing
// the test if dir cannot be read.
func List(t testing.TB, dir string, skip ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !slices.Contains(skip, e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
