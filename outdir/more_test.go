package outdir

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	in := map[string]any{"a": 1.5, "b": []any{"x"}}
	if err := WriteJSON(path, in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(in, out) || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("read back %q (%v)", b, err)
	}
	if err := WriteJSON(path, math.NaN()); err == nil {
		t.Error("NaN written as JSON")
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("a failed write changed the file: %q", b2)
	}
}

// TestDirCreate: Create writes in place inside the temporary directory,
// refuses paths outside it and existing files, and its files appear with
// the directory at Commit.
func TestDirCreate(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "out")
	d := mustNew(t, out, false)
	defer d.Abort()
	if err := os.MkdirAll(d.Join("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	hello := func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }
	if err := d.Create(d.Join("sub/a.txt"), hello); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(d.Join("sub/a.txt"), hello); err == nil {
		t.Error("an existing file was overwritten")
	}
	for _, p := range []string{filepath.Join(base, "elsewhere.txt"), d.Path(), d.Join("../x.txt")} {
		if err := d.Create(p, hello); err == nil {
			t.Errorf("%s: written outside the temporary directory", p)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "elsewhere.txt")); err == nil {
		t.Error("a file was created outside")
	}
	failing := errors.New("disk on fire")
	if err := d.Create(d.Join("b.txt"), func(io.Writer) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("the writer's error was lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "sub", "a.txt")); err == nil {
		t.Error("visible before Commit")
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "sub", "a.txt")); err != nil || string(b) != "hello" {
		t.Errorf("after Commit: %q, %v", b, err)
	}
	if err := d.Create(filepath.Join(out, "late.txt"), hello); err == nil {
		t.Error("Create after Commit")
	}
}

// TestCreateFile: a new file gets the marker and the bytes; an existing
// one is replaced only with force and only when it starts with the
// marker; a directory, an input and a file in an input directory are
// refused; a failed write leaves the old file.
func TestCreateFile(t *testing.T) {
	dir := t.TempDir()
	const marker = "# made by a test\n"
	body := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	path := filepath.Join(dir, "out.tsv")
	if err := CreateFile(path, false, marker, body("a\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != marker+"a\n" {
		t.Fatalf("content %q", b)
	}
	if err := CreateFile(path, false, marker, body("b\n")); !errors.Is(err, ErrFileExists) {
		t.Errorf("existing without force: %v", err)
	}
	if err := CreateFile(path, true, marker, body("b\n")); err != nil {
		t.Errorf("ours with force: %v", err)
	}
	if err := CreateFile(path, true, marker, func(io.Writer) error { return errors.New("disk full") }); err == nil {
		t.Error("failed write reported no error")
	}
	if b, _ := os.ReadFile(path); string(b) != marker+"b\n" {
		t.Errorf("content after replace and failed write %q", b)
	}
	user := filepath.Join(dir, "user.tsv")
	os.WriteFile(user, []byte("precious\n"), 0o644)
	if err := CreateFile(user, true, marker, body("c\n")); !errors.Is(err, ErrNotOurs) {
		t.Errorf("user's file with force: %v", err)
	}
	if b, _ := os.ReadFile(user); string(b) != "precious\n" {
		t.Errorf("user's file changed: %q", b)
	}
	if err := CreateFile(dir, true, marker, body("c\n")); err == nil {
		t.Error("a directory accepted")
	}
	if err := CreateFile(path, true, marker, body("c\n"), path); !errors.Is(err, ErrContainsInput) {
		t.Errorf("the input itself: %v", err)
	}
	if err := CreateFile(filepath.Join(dir, "new.tsv"), false, marker, body("c\n"), dir); !errors.Is(err, ErrContainsInput) {
		t.Errorf("inside an input directory: %v", err)
	}
}
