//go:build !linux

package observed

// adviseHuge is a no-op where transparent huge pages are not available.
func adviseHuge[T any](b []T) {}
