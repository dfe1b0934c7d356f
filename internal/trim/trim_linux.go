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
	// smaps, not maps: a read-only mapping may still hold pages the
	// program wrote before making it read-only (relocations the dynamic
	// linker applied, RELRO, in a cgo build), which dropping would undo.
	// Those pages count as Anonymous; only a mapping with none is
	// dropped.
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	type mapping struct{ start, end uintptr }
	var cur *mapping
	var clean []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if r, ok := strings.CutPrefix(line, "Anonymous:"); ok && cur != nil {
			if strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r), "kB")) == "0" {
				clean = append(clean, *cur)
			}
			cur = nil
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok || len(fields) < 5 || strings.HasSuffix(fields[0], ":") {
			continue
		}
		// A mapping's header line: range perms offset dev inode [path].
		cur = nil
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		cur = &mapping{uintptr(start), uintptr(end)}
	}
	if sc.Err() != nil {
		return
	}
	for _, m := range clean {
		madvise(m.start, m.end-m.start, syscall.MADV_RANDOM)
		madvise(m.start, m.end-m.start, syscall.MADV_DONTNEED)
	}
}

func madvise(addr, n uintptr, advice int) {
	syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(advice))
}
