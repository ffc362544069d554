//go:build !linux

package outdir

import (
	"io/fs"
	"os"
	"path/filepath"
)

// syncTree makes every file and directory below dir durable, one fsync
// each (directories where the platform allows it).
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			syncDir(path)
			return nil
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}
