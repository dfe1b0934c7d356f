package store

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// spill maps the memory of one index from files in a directory. Each
// mapping has a file of its own, removed as soon as it is mapped: the
// mapping is all that holds the file, so the disk space goes when the
// mapping does — when the index is collected, or at once for the tables
// a build outgrows — and nothing is left behind by a crash.
type spill struct {
	dir string

	mu   sync.Mutex
	maps map[*byte][]byte // by first byte: every mapping still in use
}

func newSpill(dir string) (*spill, error) {
	if !spillSupported {
		return nil, fmt.Errorf("store: cannot spill to %s: memory-mapped spilling is not supported on %s", dir, runtime.GOOS)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("store: cannot spill: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("store: cannot spill to %s: not a directory", dir)
	}
	return &spill{dir: dir, maps: map[*byte][]byte{}}, nil
}

// mapBytes returns n zero bytes mapped from a new file, whose disk space
// is allocated now: running out of it is an error here, not a fault at
// the first write.
func (s *spill) mapBytes(n int) ([]byte, error) {
	f, err := os.CreateTemp(s.dir, "sluice-dim-*")
	if err != nil {
		return nil, fmt.Errorf("cannot spill: %w", err)
	}
	defer f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return nil, fmt.Errorf("cannot spill: %w", err)
	}
	b, err := mapFile(f, n)
	if err != nil {
		return nil, fmt.Errorf("cannot spill %d bytes to %s: %w", n, s.dir, err)
	}
	s.mu.Lock()
	s.maps[&b[0]] = b
	s.mu.Unlock()
	return b, nil
}

// unmap gives a mapping back; b is a slice of it from its start.
func (s *spill) unmap(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	s.mu.Lock()
	m, ok := s.maps[&b[0]]
	delete(s.maps, &b[0])
	s.mu.Unlock()
	if ok {
		unmapFile(m)
	}
}

// release gives every mapping back: the index is gone.
func (s *spill) release() {
	s.mu.Lock()
	maps := s.maps
	s.maps = nil
	s.mu.Unlock()
	for _, m := range maps {
		unmapFile(m)
	}
}

// mapped returns the number of bytes mapped.
func (s *spill) mapped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, m := range s.maps {
		n += int64(len(m))
	}
	return n
}
