// Package testfile writes the small input files that tests across the
// module feed to loaders and to the command line.
package testfile

import (
	"os"
	"path/filepath"
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
