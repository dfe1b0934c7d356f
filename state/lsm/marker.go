package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// MarkerFile is the name of the checkpoint marker in a state directory.
//
// Why a marker: Pebble keeps what was committed since its last flush only
// in its write-ahead log (the *.log files), and opens a directory whose log
// is missing, or cut short, without a word: the store comes back with an
// older checkpoint, or none. A job resumed over it would silently redo the
// work of the lost checkpoints, and its sinks would hold their output
// twice. Pebble records nothing outside the log that says how far the log
// went (its MANIFEST names the oldest log to replay, not the newest), so
// the backend keeps that fact itself: every Commit writes the number of
// its checkpoint into the store (key 'c', in the same batch), and, once
// Pebble has synced the batch, into this file. On Open the store must hold
// at least the marker's checkpoint; if it holds fewer, checkpoints were
// lost, and the jobs are refused (see Backend.Store). None of Pebble's
// options does this: the tail of the newest log may be torn by a crash,
// and Pebble reads it up to the tear by design; ErrorIfNotExists concerns
// the MANIFEST only; WALFailover moves the log to another directory when
// the disk is slow; and DisableWAL would make every checkpoint a flush to
// a table file.
//
// The file has two slots of 16 bytes (checkpoint number, CRC-32C, padding);
// checkpoint n goes to slot n%2, written in place and synced with
// fdatasync: one small extra sync per checkpoint, and no metadata to sync,
// since the file never grows. A write torn by a crash spoils one slot only,
// and the other still holds the checkpoint before, which the store has
// (the marker is written after Pebble's sync, so it can lag the store by
// one checkpoint; it leads it only after a loss, until the commit that
// records the loss in the store).
const MarkerFile = "sluice-checkpoint"

const (
	markerSlot = 16
	markerSize = 2 * markerSlot
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// marker is the open checkpoint marker of a state directory.
type marker struct {
	fs   vfs.FS
	path string
	f    vfs.File

	mu   sync.Mutex // serializes writes
	last uint64     // the last checkpoint written
}

// readMarker returns the checkpoint the marker at path records; ok is
// false when there is no marker, or none of its slots is intact.
func readMarker(fs vfs.FS, path string) (seq uint64, ok bool, err error) {
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	var buf [markerSize]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, err
	}
	for i := 0; i+markerSlot <= n; i += markerSlot {
		s := buf[i : i+markerSlot]
		v := binary.LittleEndian.Uint64(s)
		if crc32.Checksum(s[:8], castagnoli) == binary.LittleEndian.Uint32(s[8:]) && (!ok || v > seq) {
			seq, ok = v, true
		}
	}
	return seq, ok, nil
}

// createMarker writes a marker at path that records checkpoint seq in both
// slots, and syncs it and its directory.
func createMarker(fs vfs.FS, dir, path string, seq uint64) (*marker, error) {
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	m := &marker{fs: fs, path: path, f: f}
	var buf [markerSize]byte
	putSlot(buf[:markerSlot], seq)
	putSlot(buf[markerSlot:], seq)
	if _, err := f.WriteAt(buf[:], 0); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(fs, dir); err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// openMarker opens the existing marker at path for writing.
func openMarker(fs vfs.FS, path string) (*marker, error) {
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	return &marker{fs: fs, path: path, f: f}, nil
}

// write records checkpoint seq, durably, unless a later one was recorded
// (commits may call it out of order).
func (m *marker) write(seq uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq <= m.last {
		return nil
	}
	m.last = seq
	var slot [markerSlot]byte
	putSlot(slot[:], seq)
	if _, err := m.f.WriteAt(slot[:], int64(seq%2)*markerSlot); err != nil {
		return err
	}
	return m.f.SyncData()
}

func (m *marker) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Close()
}

func putSlot(s []byte, seq uint64) {
	binary.LittleEndian.PutUint64(s, seq)
	binary.LittleEndian.PutUint32(s[8:], crc32.Checksum(s[:8], castagnoli))
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("cannot open directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
