package store

import (
	"os"
	"syscall"
)

const spillSupported = true

// mapFile sizes f to n bytes, allocating its disk space, and maps it
// shared, for reading and writing.
func mapFile(f *os.File, n int) ([]byte, error) {
	fd := int(f.Fd())
	if err := syscall.Fallocate(fd, 0, 0, int64(n)); err != nil {
		return nil, err
	}
	return syscall.Mmap(fd, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }
