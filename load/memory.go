package load

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// AvailableMemory returns the bytes of memory available for new
// allocations (MemAvailable of /proc/meminfo), or +Inf where unknown.
func AvailableMemory() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return math.Inf(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return math.Inf(1)
}

// The memory model of a load and the solve after it, in bytes.
const (
	// DenseBytesPerEntry is the default peak memory per entry of a dense
	// problem, the matrix itself included, for a method that declares
	// none (rpca.Capabilities.BytesPerEntry).
	DenseBytesPerEntry = 5 * 8

	// SampledBytesPerEntry is the memory per observed entry of Algorithm
	// 2: the positions while sampling, the compressed rows and columns,
	// and the method's values on Φ. Measured: peak RSS grows by 68 bytes
	// per entry from p = 0.1 to 0.3 on a 3000×3000 .npy; rounded up.
	SampledBytesPerEntry = 80

	// CoordinateBytesPerEntry is the memory per entry of a Matrix Market
	// coordinate file: the triplets while reading (24 bytes and the line)
	// and the observed matrix with the method's work arrays.
	CoordinateBytesPerEntry = 96
)

// MemoryError reports that a problem would not fit in the free memory.
type MemoryError struct {
	File      string
	What      string  // what needs the memory, e.g. "a dense 3000×3000 matrix"
	Need      float64 // bytes
	Available float64 // bytes
	// Rate is the sampling rate asked for (0: none).
	Rate float64
	// MaxRate is the largest sampling rate p at which the problem would
	// take about half the free memory (0 when sampling does not apply).
	MaxRate float64
	// Streamed says whether sampling happens while the file is read
	// (.npy), so that the whole matrix is never held.
	Streamed bool
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("%s: %s needs about %.1f GB, more than the %.1f GB free", e.File, e.What, e.Need/1e9, e.Available/1e9)
}
