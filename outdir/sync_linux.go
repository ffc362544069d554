package outdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncTree makes every file and directory below dir durable: on Linux
// one syncfs(2) of dir's file system, which also covers the files that
// [Dir.Create] did not sync.
func syncTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
