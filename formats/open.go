package formats

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is wrapped by the error of Open for a path that is not a
// regular file: a named pipe (FIFO), a device, a socket or a directory.
// Reading one can block without end, out of reach of cancellation, so the
// readers refuse it before opening it.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading after checking that it is a regular file
// (following symbolic links): the one way the file readers open their
// input.
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		kind := "a special file"
		switch m := st.Mode(); {
		case m.IsDir():
			kind = "a directory"
		case m&os.ModeNamedPipe != 0:
			kind = "a named pipe (FIFO)"
		case m&os.ModeDevice != 0:
			kind = "a device"
		case m&os.ModeSocket != 0:
			kind = "a socket"
		}
		return nil, fmt.Errorf("%s is %s, %w: rpca reads its inputs from regular files (copy the data into one)", path, kind, ErrNotRegular)
	}
	return os.Open(path)
}
