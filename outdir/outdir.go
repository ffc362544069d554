// Package outdir writes output atomically: single files (WriteFile), and
// whole output directories (Dir) that appear complete or not at all and
// carry an ownership marker (OwnerMarker), so that a later run may replace
// a directory rpca wrote but nothing else the user owns (Check).
package outdir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// WriteFile creates or replaces the file at path with the bytes that
// write produces. The bytes go to a temporary file in the same directory,
// which is flushed, synced to disk and renamed over path only if write and
// all file operations succeed; on any error the temporary file is removed
// and an existing file at path is left untouched. The new file has
// permissions 0644.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = writeBuffered(f, write); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// writeBuffered writes the bytes that write produces to f, through a buffer.
func writeBuffered(f *os.File, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(&earlyWriteback{f: f}, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// writebackChunk is the number of bytes after which a file being written
// has them handed to the disk (startWriteback).
const writebackChunk = 8 << 20

// earlyWriteback writes to f and starts the writeback of every
// writebackChunk bytes as soon as they are written, so that the data go
// to the disk while the rest of the file is produced and the final Sync
// waits for the last chunk only.
type earlyWriteback struct {
	f          *os.File
	off, start int64 // bytes written; the first not yet handed over
}

func (w *earlyWriteback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.start >= writebackChunk {
		startWriteback(w.f, w.start, w.off-w.start)
		w.start = w.off
	}
	return n, err
}

// syncDir makes a rename in dir durable where the platform supports it;
// failures are ignored because the data itself is already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ErrExists is wrapped by [New] and [Dir.Commit] when
// the output directory exists, is not empty and force is not set.
var ErrExists = errors.New("output directory exists and is not empty")

// ErrNotOurs is wrapped when force is set but the existing non-empty
// directory has no [OwnerMarker]: it was not written by [Dir], so it
// may hold the user's own files and is never replaced.
var ErrNotOurs = errors.New("directory was not written by rpca")

// ErrProtectedDir is wrapped when the output directory is the file
// system's root, the home directory, or the current directory or one of
// its ancestors: none of them is ever replaced, with force or not.
var ErrProtectedDir = errors.New("directory may not be replaced")

// ErrContainsInput is wrapped when the output directory would replace a
// directory that holds one of the command's inputs.
var ErrContainsInput = errors.New("directory holds an input of this command")

// OwnerMarker is the name of the file that every directory made by
// [Dir] contains. Only a directory holding it may be replaced with
// force.
const OwnerMarker = ".rpca-output"

const ownerMarkerText = "This directory was written by rpca. 'rpca ... --force' may replace it as a whole.\n"

// Dir builds an output directory so that it appears complete or not
// at all: files are written into a temporary sibling directory
// (DIR.tmp-XXXX) that [Dir.Commit] renames to DIR. Typical use:
//
//	d, err := outdir.New(out, force, inputs...)
//	if err != nil { ... }
//	defer d.Abort()                    // no-op after a successful Commit
//	npy.WriteFile(d.Join("lowrank.npy"), m)
//	...
//	return d.Commit()
type Dir struct {
	dir    string // final path
	tmp    string // temporary sibling being filled
	force  bool
	inputs []string
	done   bool // committed or aborted
}

// New prepares to create dir. It fails if dir exists as a
// non-empty directory (or as something other than a directory) unless
// force is set; with force an existing directory is replaced only at
// Commit, so a run that fails leaves it intact.
//
// Whatever force says, dir is refused (before anything is created) when it
// is the root, the home directory, the current directory or one of its
// ancestors, or when it is or contains one of inputs (the paths the
// command reads); an existing non-empty dir is replaced only if it holds
// the [OwnerMarker] that every Dir writes.
func New(dir string, force bool, inputs ...string) (*Dir, error) {
	dir = filepath.Clean(dir)
	if err := checkTarget(dir, force, inputs); err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, OwnerMarker), []byte(ownerMarkerText), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Dir{dir: dir, tmp: tmp, force: force, inputs: inputs}, nil
}

// WriteFunc writes one file at path with the bytes that write produces:
// [WriteFile], or a [Dir]'s [Dir.Create].
type WriteFunc func(path string, write func(w io.Writer) error) error

// Create writes a new file at path, which must lie inside the temporary
// directory. Unlike [WriteFile] it writes in place, without a temporary
// file or a sync of its own: nothing in the directory is visible before
// Commit, and Commit makes every file durable before the rename. Many
// small files are written much faster this way. A failed write leaves a
// partial file, which Abort removes with the rest.
func (d *Dir) Create(path string, write func(w io.Writer) error) error {
	if p := filepath.Clean(path); d.done || p == d.tmp || !within(p, d.tmp) {
		return fmt.Errorf("outdir: %s is not inside the output directory being built (%s)", path, d.tmp)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = writeBuffered(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Check reports, without creating anything, whether
// [New] would accept dir with the same force and inputs: nil when
// dir does not exist, is an empty directory, or is a directory written by
// rpca and force is set; an error wrapping [ErrExists],
// [ErrNotOurs], [ErrProtectedDir] or [ErrContainsInput] otherwise.
// Commands call it before long work so that they fail early.
func Check(dir string, force bool, inputs ...string) error {
	return checkTarget(filepath.Clean(dir), force, inputs)
}

// Try is Check, and then creates the temporary sibling of dir and removes
// it at once, so that a parent that is read-only or cannot be made is
// reported before long work, not after it.
func Try(dir string, force bool, inputs ...string) error {
	if err := Check(dir, force, inputs...); err != nil {
		return err
	}
	d, err := New(dir, force, inputs...)
	if err != nil {
		return fmt.Errorf("cannot create output directory %s: %w", dir, err)
	}
	return d.Abort()
}

// checkTarget reports whether dir may be (re)placed.
func checkTarget(dir string, force bool, inputs []string) error {
	if err := checkProtected(dir, inputs); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: a parent of the output directory is a file, not a directory", dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	empty, err := isEmptyDir(dir)
	if err != nil {
		return err
	}
	switch {
	case empty:
		return nil
	case !force:
		return fmt.Errorf("%s: %w (use force to replace it)", dir, ErrExists)
	}
	if _, err := os.Lstat(filepath.Join(dir, OwnerMarker)); err != nil {
		return fmt.Errorf("%s: %w (it has no %s file), so force will not replace it; choose another output directory", dir, ErrNotOurs, OwnerMarker)
	}
	return nil
}

// checkProtected refuses the root, the home directory, the current
// directory and its ancestors, and any directory that is or contains one
// of inputs. Paths are compared after making them absolute and resolving
// symbolic links (of the longest existing prefix).
func checkProtected(dir string, inputs []string) error {
	abs := resolve(dir)
	if abs == "" {
		return nil
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("%s: %w: it is the root of the file system", dir, ErrProtectedDir)
	}
	if home, err := os.UserHomeDir(); err == nil && resolve(home) == abs {
		return fmt.Errorf("%s: %w: it is the home directory", dir, ErrProtectedDir)
	}
	if wd, err := os.Getwd(); err == nil && within(resolve(wd), abs) {
		return fmt.Errorf("%s: %w: it is the current directory or one of its parents", dir, ErrProtectedDir)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if within(resolve(in), abs) {
			return fmt.Errorf("%s: %w (%s); write the output elsewhere", dir, ErrContainsInput, in)
		}
	}
	return nil
}

// resolve returns the absolute path of p with symbolic links resolved in
// its longest existing prefix ("" if p cannot be made absolute).
func resolve(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	if path == "" || dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// Path returns the temporary directory to write into.
func (d *Dir) Path() string { return d.tmp }

// Join returns the path of name (slash-separated) inside the temporary
// directory.
func (d *Dir) Join(name string) string { return filepath.Join(d.tmp, filepath.FromSlash(name)) }

// Final returns the directory that Commit creates.
func (d *Dir) Final() string { return d.dir }

// Commit renames the temporary directory to the final one. An existing
// empty directory is replaced; an existing non-empty one is replaced only
// with force (it is first moved aside into DIR.old-XXXX, then removed after
// the rename, and moved back if the rename fails). After Commit, Abort
// does nothing.
func (d *Dir) Commit() error {
	if d.done {
		return fmt.Errorf("%s: output directory already committed or aborted", d.dir)
	}
	if err := checkTarget(d.dir, d.force, d.inputs); err != nil {
		return err
	}
	if err := syncTree(d.tmp); err != nil {
		return fmt.Errorf("outdir: making %s durable: %v", d.tmp, err)
	}
	var old string
	if _, err := os.Lstat(d.dir); err == nil {
		empty, err := isEmptyDir(d.dir)
		if err != nil {
			return err
		}
		if empty {
			if err := os.Remove(d.dir); err != nil {
				return err
			}
		} else {
			// Move the old directory into a fresh holder directory, so
			// that its new name is unique without a race.
			holder, err := os.MkdirTemp(filepath.Dir(d.dir), filepath.Base(d.dir)+".old-")
			if err != nil {
				return err
			}
			old = filepath.Join(holder, "previous")
			if err := os.Rename(d.dir, old); err != nil {
				os.Remove(holder)
				return err
			}
		}
	}
	if err := os.Rename(d.tmp, d.dir); err != nil {
		if old != "" {
			if os.Rename(old, d.dir) == nil {
				os.Remove(filepath.Dir(old))
			}
		}
		return err
	}
	d.done = true
	syncDir(filepath.Dir(d.dir))
	if old != "" {
		if err := os.RemoveAll(filepath.Dir(old)); err != nil {
			return fmt.Errorf("output committed, but removing the previous %s (moved to %s) failed: %v", d.dir, old, err)
		}
	}
	return nil
}

// Abort removes the temporary directory and everything in it. It does
// nothing after Commit or a previous Abort, so it can be deferred.
func (d *Dir) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	return os.RemoveAll(d.tmp)
}

// WriteJSON writes v as indented JSON to path, atomically (WriteFile).
func WriteJSON(path string, v any) error {
	return WriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// ErrFileExists is wrapped by [CreateFile] when the output file exists
// and force is not set.
var ErrFileExists = errors.New("output file exists")

// CreateFile writes the file at path atomically ([WriteFile]): marker, a
// first line that says rpca wrote the file, then the bytes that write
// produces. Whether path may be written is [CheckFile]'s rule.
func CreateFile(path string, force bool, marker string, write func(w io.Writer) error, inputs ...string) error {
	if err := CheckFile(path, force, marker, inputs...); err != nil {
		return err
	}
	return WriteFile(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, marker); err != nil {
			return err
		}
		return write(w)
	})
}

// CheckFile reports, without writing, whether [CreateFile] may write
// path: an existing file is replaced only when force is set and its
// first bytes are marker, so that a file rpca did not write is never
// replaced; a directory is refused; and path may not be one of inputs,
// nor lie in a directory among them.
func CheckFile(path string, force bool, marker string, inputs ...string) error {
	abs := resolve(path)
	for _, in := range inputs {
		if in != "" && within(abs, resolve(in)) {
			return fmt.Errorf("%s: %w (%s); write the output elsewhere", path, ErrContainsInput, in)
		}
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s: %w", path, ErrIsDir)
	case !force:
		return fmt.Errorf("%s: %w (use force to replace a file that rpca wrote)", path, ErrFileExists)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	head := make([]byte, len(marker))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head) != marker {
		return fmt.Errorf("%s: %w: its first line is not %q, so force will not replace it", path, ErrNotOurs, strings.TrimSpace(marker))
	}
	return nil
}

// ErrIsDir is wrapped by [CheckFile] when the output file is a directory.
var ErrIsDir = errors.New("is a directory, and the output is a file")

// parentDir returns the directory that holds p (p itself for a root).
func parentDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return filepath.Dir(abs)
}
