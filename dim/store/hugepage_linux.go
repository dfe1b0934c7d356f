package store

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back b with transparent huge pages where
// it is set to do so on request (/sys/kernel/mm/transparent_hugepage/
// enabled = madvise). Lookups touch the table and the arena at random, so
// with 4 KiB pages nearly every lookup misses the TLB twice; with 2 MiB
// pages the page walks mostly hit the caches. It is advice: errors are
// ignored, and regions smaller than a huge page are left alone.
func adviseHuge(b []byte) {
	const huge = 2 << 20
	if cap(b) < 2*huge {
		return
	}
	b = b[:cap(b)]
	// madvise needs a page-aligned start: round it up.
	p := uintptr(unsafe.Pointer(&b[0]))
	skip := int((-p) & (4096 - 1))
	_ = syscall.Madvise(b[skip:], syscall.MADV_HUGEPAGE)
}
