package lsm

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReserveFile is the name of the file in a state directory that holds the
// disk space the backend sets aside (Options.Reserve).
//
// Why: Pebble cannot always fail cleanly on a full disk. A write of its
// write-ahead log that fails while the log is being switched panics with
// locks held (and may crash the process outright), and a failed MANIFEST
// write ends in Logger.Fatalf. So the backend keeps some space in reserve
// and wraps Pebble's filesystem with vfs.OnDiskFull: at the first "no space
// left on device", the reserve is deleted and the write retried, so that
// whatever Pebble was writing completes, and the backend marks itself
// failed: its next call returns the error, and nothing more is written.
// Open sets the reserve aside again; a disk without room for it fails Open.
const ReserveFile = "sluice-reserve"

// DefaultReserve is the space set aside unless Options.Reserve says
// otherwise: four of Pebble's (default) memtables, room for a flush, a new
// write-ahead log and its MANIFEST edits to finish.
const DefaultReserve = 16 << 20

// reserve makes sure the file at path holds size bytes.
func reserve(fs vfs.FS, dir, path string, size int64) error {
	if fi, err := fs.Stat(path); err == nil && fi.Size() >= size {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	err = allocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(fs, dir)
	}
	if err != nil {
		fs.Remove(path)
		return fmt.Errorf("cannot set aside %d MiB in %s: %w", size>>20, path, err)
	}
	return nil
}

// allocate gives f size bytes of disk space: with fallocate where the
// system has it, else by writing them.
func allocate(f vfs.File, size int64) error {
	if done, err := fallocate(f, size); done || err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
	}
	return nil
}
