package lsm

import (
	"errors"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// fallocate allocates size bytes to f at once; done is false where the
// filesystem cannot (the caller writes them instead).
func fallocate(f vfs.File, size int64) (done bool, err error) {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return false, nil
	}
	err = unix.Fallocate(int(fd), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return false, nil
	}
	return err == nil, err
}
