package kshuffle

import (
	"encoding/binary"
	"fmt"
)

// WriterState is what a reader knows of one writer at a position of its
// partition.
type WriterState struct {
	// Watermark is the highest watermark the writer sent.
	Watermark int64
	// Idle reports whether the writer said it is idle.
	Idle bool
	// Done reports whether the writer sent its end of input.
	Done bool
}

// Checkpoint is a position in a partition of a shuffle topic: the offset
// of the next record to read and the writers' states before it. The zero
// Checkpoint is the start of the partition. A checkpoint can be kept with
// the consumer's committed offset (MarshalBinary fits Kafka's commit
// metadata), so that a restarted reader resumes with the watermarks and
// ends of input it had already seen.
type Checkpoint struct {
	Offset  int64
	Writers []WriterState
}

const checkpointVersion = 1

// AppendBinary appends the checkpoint's encoding to dst.
func (c Checkpoint) AppendBinary(dst []byte) ([]byte, error) {
	dst = append(dst, checkpointVersion)
	dst = binary.AppendVarint(dst, c.Offset)
	dst = binary.AppendUvarint(dst, uint64(len(c.Writers)))
	for _, w := range c.Writers {
		var flags byte
		if w.Idle {
			flags |= 1
		}
		if w.Done {
			flags |= 2
		}
		dst = append(dst, flags)
		dst = binary.AppendVarint(dst, w.Watermark)
	}
	return dst, nil
}

// MarshalBinary encodes the checkpoint.
func (c Checkpoint) MarshalBinary() ([]byte, error) { return c.AppendBinary(nil) }

// UnmarshalBinary decodes a checkpoint encoded by MarshalBinary.
func (c *Checkpoint) UnmarshalBinary(b []byte) error {
	bad := func(what string) error {
		return fmt.Errorf("cannot decode shuffle checkpoint: bad %s: %w", what, errCorrupt)
	}
	if len(b) == 0 || b[0] != checkpointVersion {
		return bad("version")
	}
	b = b[1:]
	off, n := binary.Varint(b)
	if n <= 0 {
		return bad("offset")
	}
	b = b[n:]
	cnt, n := binary.Uvarint(b)
	if n <= 0 || cnt > uint64(len(b)-n)/2 {
		return bad("writer count")
	}
	b = b[n:]
	ws := make([]WriterState, cnt)
	for i := range ws {
		if len(b) == 0 {
			return bad("writer state")
		}
		flags := b[0]
		if flags > 3 {
			return bad("writer flags")
		}
		wm, n := binary.Varint(b[1:])
		if n <= 0 {
			return bad("watermark")
		}
		b = b[1+n:]
		ws[i] = WriterState{Watermark: wm, Idle: flags&1 != 0, Done: flags&2 != 0}
	}
	if len(b) != 0 {
		return bad("length")
	}
	c.Offset, c.Writers = off, ws
	return nil
}
