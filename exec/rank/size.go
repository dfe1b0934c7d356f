package rank

import (
	"unsafe"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// Estimates of the memory of a Top-N's state: a partition with its map
// slot, and a row besides its values and identity (with its slot in the
// partition).
const (
	partOverhead  = int64(unsafe.Sizeof(partition{})) + 48
	entryOverhead = int64(unsafe.Sizeof(entry{})) + 8
)

// stateSize keeps the size of a Top-N's state for the job's metrics: the
// partitions and their keys exactly, the rows by their number times the
// average size of the rows kept so far (a row that leaves is not looked
// at again).
type stateSize struct {
	gauge    *exec.StateGauge
	keyBytes int64 // the partitions and their keys
	rows     int64 // the rows of all partitions
	// Rows kept so far and their sizes, for the average.
	made, madeBytes int64
	// The partition the last lookup found and its rows then, so that a
	// row's insertion or retraction is counted by the change.
	last    *partition
	lastLen int
}

// looked notes the partition a row was looked up in (nil: none).
func (s *stateSize) looked(p *partition) {
	s.last = p
	if p != nil {
		s.lastLen = len(p.rows)
	}
}

// settle counts the rows the last row added to or removed from its
// partition.
func (s *stateSize) settle() {
	if s.last != nil {
		s.rows += int64(len(s.last.rows) - s.lastLen)
		s.last = nil
	}
}

func (s *stateSize) addPart(key string) { s.keyBytes += partOverhead + int64(len(key)) }

func (s *stateSize) removePart(key string, p *partition) {
	s.keyBytes -= partOverhead + int64(len(key))
	s.rows -= int64(len(p.rows))
}

// kept samples the size of a new row.
func (s *stateSize) kept(e *entry) {
	s.made++
	s.madeBytes += entryOverhead + types.ValuesSize(e.vals) + int64(len(e.enc))
}

func (s *stateSize) report(parts int) {
	var bytes int64
	if s.made > 0 {
		bytes = s.rows * (s.madeBytes / s.made)
	}
	s.gauge.Set(int64(parts), s.keyBytes+bytes)
}
