package rowcodec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluicesql/sluice/types"
)

// Encoder appends rows to one payload. The zero Encoder is not usable; get
// one from Codec.NewEncoder. An Encoder is used by one goroutine at a time.
type Encoder struct {
	c        *Codec
	buf      []byte
	rows     int
	prevPart int32
	prevOff  int64
	nulls    []byte
	foreign  []byte
}

// NewEncoder returns an empty encoder.
func (c *Codec) NewEncoder() *Encoder {
	e := &Encoder{c: c, nulls: make([]byte, c.bitmapLen), foreign: make([]byte, c.bitmapLen)}
	e.Reset()
	return e
}

// Reset empties the payload, keeping its memory.
func (e *Encoder) Reset() {
	e.buf = append(e.buf[:0], e.c.header...)
	e.rows = 0
	e.prevPart, e.prevOff = 0, 0
}

// Rows returns the number of rows in the payload.
func (e *Encoder) Rows() int { return e.rows }

// Len returns the size of the payload in bytes.
func (e *Encoder) Len() int { return len(e.buf) }

// Bytes returns the payload. It stays valid until the next Append or Reset.
func (e *Encoder) Bytes() []byte { return e.buf }

// AppendBatch appends every row of b; on error the payload holds the rows
// before the failing one.
func (e *Encoder) AppendBatch(b *types.Batch) error {
	for i := range b.Rows {
		if err := e.Append(b.Rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// Append appends row r. On error the payload is unchanged.
func (e *Encoder) Append(r types.Row) error {
	cols := e.c.cols
	if len(r.Vals) != len(cols) {
		return fmt.Errorf("cannot encode row: it has %d values, the codec %d columns", len(r.Vals), len(cols))
	}
	if r.Kind > types.Delete {
		return fmt.Errorf("cannot encode row: unknown row kind %d", r.Kind)
	}
	head := byte(r.Kind)
	var hasNulls, hasForeign bool
	for i := range r.Vals {
		k := r.Vals[i].Kind()
		if k == types.KindNull {
			hasNulls = true
		} else if k != cols[i].kind {
			hasForeign = true
		}
	}
	if hasNulls {
		head |= headNulls
		clear(e.nulls)
	}
	if hasForeign {
		head |= headForeign
		clear(e.foreign)
	}
	if hasNulls || hasForeign {
		for i := range r.Vals {
			k := r.Vals[i].Kind()
			if k == types.KindNull {
				e.nulls[i>>3] |= 1 << (i & 7)
			} else if k != cols[i].kind {
				e.foreign[i>>3] |= 1 << (i & 7)
			}
		}
	}
	o := r.Origin
	switch {
	case o.Part == e.prevPart && o.Offset == e.prevOff+1:
		head |= originNext
	case o.Part == e.prevPart && o.Offset == e.prevOff:
		head |= originSame
	}
	start := len(e.buf)
	buf := append(e.buf, head)
	if head&headOriginMask == originExplicit {
		buf = appendVarint(buf, int64(o.Part)-int64(e.prevPart))
		buf = appendVarint(buf, o.Offset-e.prevOff)
	}
	if hasNulls {
		buf = append(buf, e.nulls...)
	}
	if hasForeign {
		buf = append(buf, e.foreign...)
	}
	var err error
	for i := range r.Vals {
		v := r.Vals[i]
		k := v.Kind()
		switch {
		case k == types.KindNull:
			continue
		case k != cols[i].kind:
			buf, err = appendAny(buf, v, 0)
		default:
			buf, err = appendValue(buf, v, cols[i].class, cols[i].scale, 0)
		}
		if err != nil {
			e.buf = buf[:start]
			return fmt.Errorf("cannot encode column %d: %w", i, err)
		}
	}
	e.buf = buf
	e.rows++
	e.prevPart, e.prevOff = o.Part, o.Offset
	return nil
}

// appendAny appends v with its kind in front.
func appendAny(dst []byte, v types.Value, depth int) ([]byte, error) {
	k := v.Kind()
	cl := classOf(k)
	if cl == classInvalid {
		return dst, fmt.Errorf("value of unknown kind %d", k)
	}
	dst = append(dst, byte(k))
	if cl == classNull {
		return dst, nil
	}
	return appendValue(dst, v, cl, -1, depth)
}

// appendValue appends the non-NULL value v as a value of class cl; scale is
// the column's DECIMAL scale, -1 for none.
func appendValue(dst []byte, v types.Value, cl class, scale, depth int) ([]byte, error) {
	switch cl {
	case classBool:
		if v.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case classInt:
		return appendVarint(dst, v.Int()), nil
	case classFloat:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float())), nil
	case classDecimal:
		if !v.IsBigDecimal() {
			if v.Scale() == scale {
				dst = append(dst, 0)
			} else {
				dst = append(dst, 1, byte(v.Scale()))
			}
			return appendVarint(dst, v.Unscaled()), nil
		}
		u := v.BigUnscaled()
		tag := byte(2)
		if u.Sign() < 0 {
			tag = 3
		}
		mag := u.Abs(u).Bytes() // big endian; rare enough to allocate
		dst = append(dst, tag, byte(v.Scale()))
		dst = appendUvarint(dst, uint64(len(mag)))
		return append(dst, mag...), nil
	case classBytes:
		s := v.Str()
		dst = appendUvarint(dst, uint64(len(s)))
		return append(dst, s...), nil
	case classList:
		if depth >= maxDepth {
			return dst, fmt.Errorf("value nested deeper than %d levels", maxDepth)
		}
		elems := v.Elems()
		dst = appendUvarint(dst, uint64(len(elems)))
		var err error
		for _, x := range elems {
			if dst, err = appendAny(dst, x, depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case classMap:
		if depth >= maxDepth {
			return dst, fmt.Errorf("value nested deeper than %d levels", maxDepth)
		}
		m := v.Map()
		if m == nil {
			return appendUvarint(dst, 0), nil
		}
		if len(m.Keys) != len(m.Values) {
			return dst, fmt.Errorf("MAP with %d keys and %d values", len(m.Keys), len(m.Values))
		}
		dst = appendUvarint(dst, uint64(len(m.Keys)))
		var err error
		for i := range m.Keys {
			if dst, err = appendAny(dst, m.Keys[i], depth+1); err != nil {
				return dst, err
			}
			if dst, err = appendAny(dst, m.Values[i], depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("value of kind %s", v.Kind())
}

func appendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

func appendVarint(dst []byte, x int64) []byte {
	return appendUvarint(dst, uint64(x<<1)^uint64(x>>63))
}
