//go:build linux

package trim

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Startup, called first thing in main (and again once a server has
// started), drops from the process's resident set the pages of its own
// executable that start-up mapped (package initialisation runs code of
// nearly every package, and the kernel maps the neighbours of each page
// it faults in), and asks the kernel to map later pages one at a time
// (MADV_RANDOM: no fault-around, no read-ahead). The dropped pages stay
// in the page cache: one used again costs a minor fault. Writable
// mappings (the data segment) are left alone: dropping their pages would
// undo what the program wrote.
func Startup() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		madvise(uintptr(start), uintptr(end-start), syscall.MADV_RANDOM)
		madvise(uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

func madvise(addr, n uintptr, advice int) {
	syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(advice))
}
