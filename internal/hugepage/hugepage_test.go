package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestMake: the slices are zeroed, of the asked length and usable, small
// or large, for two element types; on Linux with transparent huge pages
// the mapping that holds a large array is marked as advised ("hg" in
// /proc/self/smaps).
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/8 - 1, MinBytes / 8, 3*MinBytes/8 + 5} {
		x := Make[float64](n)
		y := Make[int32](n)
		if len(x) != n || len(y) != n {
			t.Fatalf("n=%d: lengths %d and %d", n, len(x), len(y))
		}
		for i := range x {
			if x[i] != 0 || y[i] != 0 {
				t.Fatalf("n=%d: entry %d not zero", n, i)
			}
		}
		for i := range x { // the array is usable after the advice
			x[i], y[i] = float64(i), int32(i)
		}
		for i := range x {
			if x[i] != float64(i) || y[i] != int32(i) {
				t.Fatalf("n=%d: entry %d reads back %v, %v", n, i, x[i], y[i])
			}
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages on this kernel")
	}
	big := Float64s(4 * MinBytes / 8)
	if !advised(t, unsafe.Pointer(&big[MinBytes/8])) {
		t.Errorf("the middle of a %d-byte array is not in a mapping advised MADV_HUGEPAGE", 4*MinBytes)
	}
	runtime.KeepAlive(big)
}

// advised reports whether the mapping of /proc/self/smaps that holds p
// has the flag of MADV_HUGEPAGE ("hg" in VmFlags).
func advised(t *testing.T, p unsafe.Pointer) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	addr := uintptr(p)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") && !strings.HasPrefix(line, "VmFlags") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			for _, fl := range strings.Fields(line)[1:] {
				if fl == "hg" {
					return true
				}
			}
			return false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping of /proc/self/smaps holds %#x", addr)
	return false
}
