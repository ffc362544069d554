//go:build !unix

package outdir

// FreeBytes cannot tell the free space on this system: it returns false.
func FreeBytes(dir string) (int64, bool) { return 0, false }
