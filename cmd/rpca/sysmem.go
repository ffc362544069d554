package main

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
)

// availableMemory returns the bytes of memory available for new
// allocations (MemAvailable of /proc/meminfo), or +Inf where unknown.
func availableMemory() float64 {
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
