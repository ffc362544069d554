package outdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the bytes [off,
// off+n) of f to the disk now, without waiting for them, so that the
// file's final Sync has little left to do while the rest is produced.
// Errors are ignored: Sync reports any that matter.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
