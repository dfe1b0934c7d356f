package kshuffle

import (
	"encoding/binary"
	"fmt"
)

// ControlHeader is the key of the header that marks a control record.
const ControlHeader = "sluice-shuffle-ctl"

// Control record kinds.
const (
	ctlWatermark byte = 1 + iota
	ctlIdle
	ctlActive
	ctlEnd
)

// control is a decoded control record.
type control struct {
	kind    byte
	writer  int
	writers int
	wm      int64
}

func appendControl(dst []byte, c control) []byte {
	dst = append(dst, c.kind)
	dst = binary.AppendUvarint(dst, uint64(c.writer))
	dst = binary.AppendUvarint(dst, uint64(c.writers))
	return binary.AppendVarint(dst, c.wm)
}

func parseControl(b []byte) (control, error) {
	var c control
	if len(b) == 0 || b[0] < ctlWatermark || b[0] > ctlEnd {
		return c, fmt.Errorf("unknown control record: %w", errCorrupt)
	}
	c.kind = b[0]
	b = b[1:]
	w, n := binary.Uvarint(b)
	if n <= 0 || w > 1<<30 {
		return c, fmt.Errorf("bad control record writer: %w", errCorrupt)
	}
	b = b[n:]
	ws, n := binary.Uvarint(b)
	if n <= 0 || ws > 1<<30 {
		return c, fmt.Errorf("bad control record writers: %w", errCorrupt)
	}
	b = b[n:]
	wm, n := binary.Varint(b)
	if n <= 0 || n != len(b) {
		return c, fmt.Errorf("bad control record watermark: %w", errCorrupt)
	}
	c.writer, c.writers, c.wm = int(w), int(ws), wm
	return c, nil
}
