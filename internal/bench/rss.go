package bench

import (
	"os"
	"strconv"
	"strings"
)

// ResidentBytes returns the resident memory of the process (Linux), 0
// when it cannot be read.
func ResidentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
