package outdir

import (
	"encoding/json"
	"errors"
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
