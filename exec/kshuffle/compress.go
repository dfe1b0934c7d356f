package kshuffle

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The codec byte in front of a data record's payload.
const (
	wireNone   byte = 0
	wireZstd   byte = 1
	wireLZ4    byte = 2
	wireSnappy byte = 3
)

var errCorrupt = errors.New("corrupt shuffle record")

// compressor compresses the payloads of one writer.
type compressor struct {
	codec Compression
	zstd  *zstd.Encoder
	lz4   lz4.Compressor
}

func newCompressor(c Compression) (*compressor, error) {
	cp := &compressor{codec: c}
	if c == Zstd {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true))
		if err != nil {
			return nil, fmt.Errorf("cannot create zstd encoder: %w", err)
		}
		cp.zstd = enc
	}
	return cp, nil
}

// appendRecord appends the value of a data record holding payload to dst.
// A payload that does not shrink is sent uncompressed.
func (cp *compressor) appendRecord(dst, payload []byte) []byte {
	start := len(dst)
	switch cp.codec {
	case Zstd:
		dst = append(dst, wireZstd)
		dst = cp.zstd.EncodeAll(payload, dst)
	case LZ4:
		dst = append(dst, wireLZ4)
		dst = binary.AppendUvarint(dst, uint64(len(payload)))
		n := len(dst)
		dst = grow(dst, lz4.CompressBlockBound(len(payload)))
		m, err := cp.lz4.CompressBlock(payload, dst[n:])
		if err != nil || m == 0 { // incompressible
			dst = dst[:start]
			break
		}
		dst = dst[:n+m]
	case Snappy:
		dst = append(dst, wireSnappy)
		n := len(dst)
		dst = grow(dst, s2.MaxEncodedLen(len(payload)))
		enc := s2.EncodeSnappy(dst[n:], payload)
		dst = dst[:n+len(enc)]
	}
	if len(dst) == start || len(dst)-start > len(payload)+1 {
		dst = append(dst[:start], wireNone)
		dst = append(dst, payload...)
	}
	return dst
}

func (cp *compressor) close() {
	if cp.zstd != nil {
		cp.zstd.Close()
	}
}

// grow returns dst extended by n bytes (contents undefined).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		d := make([]byte, len(dst), len(dst)+n)
		copy(d, dst)
		dst = d
	}
	return dst[:len(dst)+n]
}

// decompressor restores the payloads of one reader.
type decompressor struct {
	max  int
	zstd *zstd.Decoder
	buf  []byte
}

func newDecompressor(max int) *decompressor { return &decompressor{max: max} }

// payload returns the payload of a data record's value. It may return a
// slice of value, or of a buffer reused by the next call.
func (d *decompressor) payload(value []byte) ([]byte, error) {
	if len(value) == 0 {
		return nil, fmt.Errorf("empty data record: %w", errCorrupt)
	}
	body := value[1:]
	switch value[0] {
	case wireNone:
		return body, nil
	case wireZstd:
		if d.zstd == nil {
			dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(d.max)), zstd.WithDecoderMaxWindow(uint64(max(d.max, zstd.MinWindowSize))))
			if err != nil {
				return nil, fmt.Errorf("cannot create zstd decoder: %w", err)
			}
			d.zstd = dec
		}
		out, err := d.zstd.DecodeAll(body, d.buf[:0])
		if err != nil {
			return nil, fmt.Errorf("cannot decompress zstd payload: %w", err)
		}
		if len(out) > d.max {
			return nil, fmt.Errorf("payload of %d bytes exceeds the limit of %d: %w", len(out), d.max, errCorrupt)
		}
		d.buf = out
		return out, nil
	case wireLZ4:
		n, m := binary.Uvarint(body)
		if m <= 0 || n == 0 || n > uint64(d.max) { // LZ4 faults on an empty destination
			return nil, fmt.Errorf("bad LZ4 payload size: %w", errCorrupt)
		}
		if uint64(cap(d.buf)) < n {
			d.buf = make([]byte, n)
		}
		out := d.buf[:n]
		k, err := lz4.UncompressBlock(body[m:], out)
		if err != nil {
			return nil, fmt.Errorf("cannot decompress LZ4 payload: %w", err)
		}
		if uint64(k) != n {
			return nil, fmt.Errorf("LZ4 payload of %d bytes, want %d: %w", k, n, errCorrupt)
		}
		return out, nil
	case wireSnappy:
		n, err := s2.DecodedLen(body)
		if err != nil {
			return nil, fmt.Errorf("cannot decompress snappy payload: %w", err)
		}
		if n > d.max {
			return nil, fmt.Errorf("payload of %d bytes exceeds the limit of %d: %w", n, d.max, errCorrupt)
		}
		if cap(d.buf) < n {
			d.buf = make([]byte, n)
		}
		out, err := s2.Decode(d.buf[:cap(d.buf)], body)
		if err != nil {
			return nil, fmt.Errorf("cannot decompress snappy payload: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown payload codec %d: %w", value[0], errCorrupt)
}

func (d *decompressor) close() {
	if d.zstd != nil {
		d.zstd.Close()
	}
}
