package rpcabeam

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/rpca-gd/rpca/gd"
)

// A work directory that Load completed holds manifestName, written last:
// what was loaded (the input and its files' sizes) and the shards' ID, so
// that Open can take the shards up again for a resumed run. The states of
// a run are checkpoint-NNNNNN.gob (NNNNNN the iteration), each written
// whole before the one before it is removed, so that a run stopped at any
// moment leaves at least one state that decodes.
const (
	manifestName     = "store.json"
	checkpointPrefix = "checkpoint-"
)

// manifest is store.json.
type manifest struct {
	Format string  `json:"format"`
	ID     string  `json:"id"`
	Input  string  `json:"input"`
	Files  []input `json:"files"`
	D1     int     `json:"d1"`
	D2     int     `json:"d2"`
	Shards int     `json:"shards"`
}

// input is one file of the input and its size in bytes.
type input struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

const manifestFormat = "rpca-beam store 2"

// ErrNoStore is wrapped by Open's error when the work directory holds no
// completed load.
var ErrNoStore = errors.New("rpcabeam: no loaded store in the work directory")

// ErrOtherInput is wrapped by Open's error when the work directory holds
// the load of other input files (another name, or a file whose size
// changed since).
var ErrOtherInput = errors.New("rpcabeam: the work directory holds another input")

// inputs returns the files of the glob in, sorted, with their sizes.
func inputs(ctx context.Context, in string) ([]input, error) {
	files, err := list(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no file matches %s", ErrInput, in)
	}
	slices.Sort(files)
	fs, err := filesystem.New(ctx, in)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	out := make([]input, len(files))
	for k, f := range files {
		n, err := fs.Size(ctx, f)
		if err != nil {
			return nil, err
		}
		out[k] = input{f, n}
	}
	return out, nil
}

// writeManifest records a completed load of in (the files of files).
func (st *Store) writeManifest(ctx context.Context, in string, files []input, shards int) error {
	b, err := json.MarshalIndent(manifest{Format: manifestFormat, ID: st.id, Input: in, Files: files, D1: st.d1, D2: st.d2, Shards: shards}, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(ctx, st.file(manifestName), b)
}

// Open takes up the shards that Load wrote into dir, for a run that goes
// on from a checkpoint, without loading the input again. in, when not
// empty, must be the input of that load, with the same files and sizes
// (ErrOtherInput otherwise). o.Shards is not read: the shards are those
// of the load.
func Open(ctx context.Context, in, dir string, o Options) (*Store, error) {
	st := newStore(dir, o)
	b, err := readFile(ctx, st.file(manifestName))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrNoStore, dir, err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != manifestFormat || m.ID == "" {
		return nil, fmt.Errorf("%w: %s is not a store manifest", errCorrupt, st.file(manifestName))
	}
	if in != "" {
		now, err := inputs(ctx, in)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(now, m.Files) {
			return nil, fmt.Errorf("%w: %s was loaded from %s (%d files), and --in is %s (%d files), or a file's size changed", ErrOtherInput, dir, m.Input, len(m.Files), in, len(now))
		}
	}
	st.id, st.d1, st.d2 = m.ID, m.D1, m.D2
	return st, st.readShards(ctx)
}

// Holds reports whether dir holds the state of a run: a completed load or
// a checkpoint.
func Holds(ctx context.Context, dir string) (bool, error) {
	dir = strings.TrimSuffix(dir, "/")
	for _, glob := range []string{dir + "/" + manifestName, dir + "/" + checkpointPrefix + "*.gob"} {
		names, err := list(ctx, glob)
		if err != nil {
			return false, err
		}
		if len(names) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// SaveCheckpoint writes c into dir as the newest state of the run, then
// removes the older states.
func SaveCheckpoint(ctx context.Context, dir string, c *gd.Checkpoint) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return err
	}
	dir = strings.TrimSuffix(dir, "/")
	name := fmt.Sprintf("%s/%s%06d.gob", dir, checkpointPrefix, c.Iteration)
	if err := writeFile(ctx, name, buf.Bytes()); err != nil {
		return err
	}
	old, err := list(ctx, dir+"/"+checkpointPrefix+"*.gob")
	if err != nil {
		return err
	}
	for _, f := range old {
		if f != name {
			if err := remove(ctx, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// LatestCheckpoint returns the newest state in dir that decodes, nil when
// there is none.
func LatestCheckpoint(ctx context.Context, dir string) (*gd.Checkpoint, error) {
	names, err := list(ctx, strings.TrimSuffix(dir, "/")+"/"+checkpointPrefix+"*.gob")
	if err != nil {
		return nil, err
	}
	slices.Sort(names) // by iteration: the numbers have six digits
	var first error
	for _, name := range slices.Backward(names) {
		b, err := readFile(ctx, name)
		var c gd.Checkpoint
		if err == nil {
			err = gob.NewDecoder(bytes.NewReader(b)).Decode(&c)
		}
		if err == nil {
			return &c, nil
		}
		if first == nil {
			first = fmt.Errorf("%w %s: %w", errCorrupt, name, err)
		}
	}
	return nil, first
}

// Remove deletes the files of the store from its work directory: the
// shards, the outputs of the passes, the broadcast files, the states and
// the manifest, and the directory itself when it is local and left
// empty. Files of other names are left where they are.
func (st *Store) Remove(ctx context.Context) error {
	names, err := list(ctx, st.dir+"/*")
	if err != nil {
		return err
	}
	for _, name := range names {
		if st.owns(path.Base(name)) {
			if err := remove(ctx, name); err != nil {
				return err
			}
		}
	}
	if !strings.Contains(st.dir, "://") {
		_ = os.Remove(st.dir) // only when empty
	}
	return nil
}

// owns reports whether base is the name of a file the store writes.
func (st *Store) owns(base string) bool {
	switch base {
	case manifestName, fileU, fileV, fileUt, fileVt, fileRowThr, fileColThr, fileRowThr0, fileColThr0, fileOperand, fileALS:
		return true
	}
	return strings.Contains(base, "rows-"+st.id+"-") || strings.Contains(base, "cols-"+st.id+"-") ||
		strings.HasPrefix(base, checkpointPrefix) && strings.HasSuffix(base, ".gob")
}

// remove deletes one file through Beam's filesystem API.
func remove(ctx context.Context, name string) error {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	r, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("rpcabeam: the file system of %s cannot remove files", name)
	}
	return r.Remove(ctx, name)
}
