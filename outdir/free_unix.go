//go:build unix

package outdir

import "syscall"

// FreeBytes returns the bytes an unprivileged writer may still use on the
// file system that holds dir (or, when dir does not exist yet, its
// nearest existing parent), and false when that cannot be told.
func FreeBytes(dir string) (int64, bool) {
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize), true
		}
		parent := parentDir(dir)
		if parent == dir {
			return 0, false
		}
		dir = parent
	}
}
