package outdir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/internal/testfile"
)

// mustNew is New for a test: it fails the test on an error.
func mustNew(t *testing.T, path string, force bool, inputs ...string) *Dir {
	t.Helper()
	d, err := New(path, force, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "first")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", st.Mode().Perm())
	}

	// A failing writer, after writing part of its output, leaves the old
	// file as it was and no temporary file behind.
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, strings.Repeat("partial", 100000))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("old file changed to %d bytes", len(b))
	}
	if got := testfile.List(t, dir, OwnerMarker); !slices.Equal(got, []string{"out.txt"}) {
		t.Fatalf("directory holds %v after a failed write", got)
	}
	// A failed first write creates nothing.
	err = WriteFile(filepath.Join(dir, "new.txt"), func(w io.Writer) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := testfile.List(t, dir, OwnerMarker); !slices.Equal(got, []string{"out.txt"}) {
		t.Fatalf("directory holds %v after a failed first write", got)
	}
	// Missing parent directory: an error, not a panic.
	if err := WriteFile(filepath.Join(dir, "no", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	// Relative path in the working directory.
	t.Chdir(dir)
	if err := WriteFile("rel.txt", func(w io.Writer) error { _, err := io.WriteString(w, "r"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "rel.txt")); string(b) != "r" {
		t.Fatalf("relative write: %q", b)
	}
}

// fill writes a file into an Dir.
func fill(t *testing.T, d *Dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(d.Join(name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAtomicDirNew(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "sub", "out") // parent created as needed
	d := mustNew(t, out, false)
	defer d.Abort()
	if !strings.HasPrefix(filepath.Base(d.Path()), "out.tmp-") || filepath.Dir(d.Path()) != filepath.Dir(out) {
		t.Fatalf("temporary dir %s is not a sibling DIR.tmp-XXXX", d.Path())
	}
	fill(t, d, "a.txt", "A")
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("output visible before Commit")
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "A" {
		t.Fatalf("committed content %q", b)
	}
	if got := testfile.List(t, filepath.Dir(out), OwnerMarker); !slices.Equal(got, []string{"out"}) {
		t.Fatalf("siblings after commit: %v", got)
	}
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "a.txt")); err != nil {
		t.Fatal("Abort after Commit removed the output")
	}
	if err := d.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
}

func TestAtomicDirExisting(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "old.txt"), []byte("old"), 0o644)

	// Without force an existing non-empty directory is refused.
	if _, err := New(out, false); !errors.Is(err, ErrExists) {
		t.Fatalf("error %v, want ErrExists", err)
	}
	if got := testfile.List(t, parent, OwnerMarker); !slices.Equal(got, []string{"out"}) {
		t.Fatalf("refused New left %v", got)
	}
	// With force too, as long as the directory is not marked as rpca's.
	if _, err := New(out, true); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("error %v, want ErrNotOurs", err)
	}
	os.WriteFile(filepath.Join(out, OwnerMarker), nil, 0o644)

	// With force, an aborted run leaves the old directory intact.
	d := mustNew(t, out, true)
	fill(t, d, "new.txt", "new")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := testfile.List(t, out, OwnerMarker); !slices.Equal(got, []string{"old.txt"}) {
		t.Fatalf("old dir after abort: %v", got)
	}
	if got := testfile.List(t, parent, OwnerMarker); !slices.Equal(got, []string{"out"}) {
		t.Fatalf("siblings after abort: %v", got)
	}

	// With force, Commit replaces the directory whole.
	d = mustNew(t, out, true)
	fill(t, d, "new.txt", "new")
	if got := testfile.List(t, out, OwnerMarker); !slices.Equal(got, []string{"old.txt"}) {
		t.Fatalf("old dir changed before commit: %v", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := testfile.List(t, out, OwnerMarker); !slices.Equal(got, []string{"new.txt"}) {
		t.Fatalf("dir after forced commit: %v", got)
	}
	if got := testfile.List(t, parent, OwnerMarker); !slices.Equal(got, []string{"out"}) {
		t.Fatalf("siblings after forced commit: %v", got)
	}

	// An existing empty directory is replaced without force.
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	d = mustNew(t, empty, false)
	fill(t, d, "x", "x")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := testfile.List(t, empty, OwnerMarker); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("empty dir after commit: %v", got)
	}

	// A directory that appears (non-empty) during the run makes Commit
	// fail without force, and leaves both the newcomer and the temp dir
	// for Abort.
	late := filepath.Join(parent, "late")
	d = mustNew(t, late, false)
	os.Mkdir(late, 0o755)
	os.WriteFile(filepath.Join(late, "other"), nil, 0o644)
	if err := d.Commit(); !errors.Is(err, ErrExists) {
		t.Fatalf("Commit over a new non-empty dir: %v", err)
	}
	d.Abort()
	if got := testfile.List(t, late, OwnerMarker); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("late dir: %v", got)
	}

	// A regular file in the way is refused even with force.
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	for _, force := range []bool{false, true} {
		if _, err := New(file, force); err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("force=%v over a file: %v", force, err)
		}
	}
	if got := testfile.List(t, parent, OwnerMarker); !slices.Equal(got, []string{"empty", "file", "late", "out"}) {
		t.Fatalf("leftovers in parent: %v", got)
	}
}

// TestOwnership covers the cases in which force must not replace a
// directory: the user's own files, the current directory and its
// parents, the root, the home directory, and a directory holding an input.
func TestOwnership(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	d := mustNew(t, out, false)
	fill(t, d, "Y.npy", "data")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, OwnerMarker)); err != nil {
		t.Fatalf("committed directory has no marker: %v", err)
	}
	// The directory is rpca's, but it holds this command's input.
	in := filepath.Join(out, "Y.npy")
	for _, inputs := range [][]string{{in}, {out}, {"", filepath.Join(out, "sub", "..", "Y.npy")}} {
		if err := Check(out, true, inputs...); !errors.Is(err, ErrContainsInput) {
			t.Errorf("inputs %v: error %v, want ErrContainsInput", inputs, err)
		}
		if _, err := New(out, true, inputs...); !errors.Is(err, ErrContainsInput) {
			t.Errorf("New, inputs %v: error %v, want ErrContainsInput", inputs, err)
		}
	}
	// A symbolic link to the input is resolved.
	link := filepath.Join(parent, "link")
	if err := os.Symlink(out, link); err == nil {
		if err := Check(out, true, filepath.Join(link, "Y.npy")); !errors.Is(err, ErrContainsInput) {
			t.Errorf("input through a link: %v", err)
		}
		if err := Check(link, true, in); !errors.Is(err, ErrContainsInput) {
			t.Errorf("output through a link: %v", err)
		}
	}
	// An input elsewhere does not block it.
	if err := Check(out, true, filepath.Join(parent, "Y.npy")); err != nil {
		t.Errorf("unrelated input: %v", err)
	}
	if b, _ := os.ReadFile(in); string(b) != "data" {
		t.Fatalf("input changed: %q", b)
	}

	// The current directory and its parents, the root and home.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	protected := []string{".", wd, filepath.Dir(wd), "/", ".."}
	if home, err := os.UserHomeDir(); err == nil {
		protected = append(protected, home)
	}
	for _, p := range protected {
		for _, force := range []bool{false, true} {
			if err := Check(p, force); !errors.Is(err, ErrProtectedDir) {
				t.Errorf("Check(%q, %v): %v, want ErrProtectedDir", p, force, err)
			}
		}
	}
	// A file as a parent.
	f := filepath.Join(parent, "file")
	os.WriteFile(f, nil, 0o644)
	if err := Check(filepath.Join(f, "out"), false); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("file as parent: %v", err)
	}
}
