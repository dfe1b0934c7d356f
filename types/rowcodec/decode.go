package rowcodec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/sluicesql/sluice/types"
)

// Decoder reads the rows of one payload at a time. The zero Decoder is not
// usable; get one from Codec.NewDecoder. A Decoder is used by one goroutine
// at a time; it keeps a reference to the payload until the next Reset.
type Decoder struct {
	c        *Codec
	src      []byte
	prevPart int32
	prevOff  int64
	err      error
}

// NewDecoder returns a decoder with no payload.
func (c *Codec) NewDecoder() *Decoder { return &Decoder{c: c} }

// Reset starts decoding payload: it checks the payload's header.
func (d *Decoder) Reset(payload []byte) error {
	d.src, d.prevPart, d.prevOff, d.err = nil, 0, 0, nil
	if len(payload) == 0 || payload[0] != Version {
		d.err = fmt.Errorf("cannot decode rows: unknown payload version: %w", ErrCorrupt)
		return d.err
	}
	n, m := binary.Uvarint(payload[1:])
	if m <= 0 {
		d.err = fmt.Errorf("cannot decode rows: bad column count: %w", ErrCorrupt)
		return d.err
	}
	if n != uint64(len(d.c.cols)) {
		d.err = fmt.Errorf("cannot decode rows: payload has %d columns, the codec %d: %w", n, len(d.c.cols), ErrCorrupt)
		return d.err
	}
	d.src = payload[1+m:]
	return nil
}

// More reports whether rows are left to decode.
func (d *Decoder) More() bool { return d.err == nil && len(d.src) > 0 }

// Decode appends up to max rows of the payload to b (all that are left when
// max <= 0) and returns how many it appended. On error it appends no rows,
// and every later call returns the same error.
func (d *Decoder) Decode(b *types.Batch, max int) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	start := len(b.Rows)
	n := 0
	for len(d.src) > 0 && (max <= 0 || n < max) {
		if err := d.row(b); err != nil {
			b.Rows = b.Rows[:start]
			d.err = fmt.Errorf("cannot decode row %d of the call: %w", n, err)
			return 0, d.err
		}
		n++
	}
	return n, nil
}

// Decode appends every row of payload to b and returns how many it appended.
// On error it appends none.
func (c *Codec) Decode(b *types.Batch, payload []byte) (int, error) {
	d := Decoder{c: c}
	if err := d.Reset(payload); err != nil {
		return 0, err
	}
	return d.Decode(b, 0)
}

func (d *Decoder) row(b *types.Batch) error {
	src := d.src
	head := src[0]
	src = src[1:]
	if head&headReserved != 0 {
		return fmt.Errorf("reserved row head bits set: %w", ErrCorrupt)
	}
	part, off := d.prevPart, d.prevOff
	switch head & headOriginMask {
	case originExplicit:
		dp, n := readVarint(src)
		if n <= 0 {
			return fmt.Errorf("bad origin partition: %w", ErrCorrupt)
		}
		src = src[n:]
		do, n := readVarint(src)
		if n <= 0 {
			return fmt.Errorf("bad origin offset: %w", ErrCorrupt)
		}
		src = src[n:]
		p := int64(part) + dp
		if p < math.MinInt32 || p > math.MaxInt32 {
			return fmt.Errorf("origin partition out of range: %w", ErrCorrupt)
		}
		part, off = int32(p), off+do
	case originNext:
		off++
	case originSame:
	default:
		return fmt.Errorf("unknown origin mode: %w", ErrCorrupt)
	}
	bl := d.c.bitmapLen
	var nulls, foreign []byte
	if head&headNulls != 0 {
		if len(src) < bl {
			return fmt.Errorf("short null bitmap: %w", ErrCorrupt)
		}
		nulls, src = src[:bl], src[bl:]
	}
	if head&headForeign != 0 {
		if len(src) < bl {
			return fmt.Errorf("short foreign bitmap: %w", ErrCorrupt)
		}
		foreign, src = src[:bl], src[bl:]
	}
	cols := d.c.cols
	vals := b.AddRow(types.RowKind(head&headKindMask), types.Origin{Part: part, Offset: off}, len(cols))
	var err error
	for i := range cols {
		switch {
		case nulls != nil && nulls[i>>3]&(1<<(i&7)) != 0:
			vals[i] = types.Value{}
		case foreign != nil && foreign[i>>3]&(1<<(i&7)) != 0:
			vals[i], src, err = readAny(src, 0)
		default:
			vals[i], src, err = readValue(src, cols[i].kind, cols[i].class, cols[i].scale, 0)
		}
		if err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	d.src = src
	d.prevPart, d.prevOff = part, off
	return nil
}

func readAny(src []byte, depth int) (types.Value, []byte, error) {
	if len(src) == 0 {
		return types.Value{}, nil, fmt.Errorf("missing value kind: %w", ErrCorrupt)
	}
	k := types.Kind(src[0])
	if int(k) >= numKinds {
		return types.Value{}, nil, fmt.Errorf("unknown value kind %d: %w", k, ErrCorrupt)
	}
	cl := classOf(k)
	if cl == classNull {
		return types.Value{}, src[1:], nil
	}
	return readValue(src[1:], k, cl, -1, depth)
}

// readValue reads a non-NULL value of kind k and class cl; scale is the
// column's DECIMAL scale, -1 for none.
func readValue(src []byte, k types.Kind, cl class, scale, depth int) (types.Value, []byte, error) {
	switch cl {
	case classBool:
		if len(src) == 0 || src[0] > 1 {
			return types.Value{}, nil, fmt.Errorf("bad BOOLEAN: %w", ErrCorrupt)
		}
		return types.BoolValue(src[0] == 1), src[1:], nil
	case classInt:
		x, n := readVarint(src)
		if n <= 0 {
			return types.Value{}, nil, fmt.Errorf("bad %s: %w", k, ErrCorrupt)
		}
		return types.BigIntValue(x).WithKind(k), src[n:], nil
	case classFloat:
		if len(src) < 8 {
			return types.Value{}, nil, fmt.Errorf("bad %s: %w", k, ErrCorrupt)
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(src))
		return types.DoubleValue(f).WithKind(k), src[8:], nil
	case classDecimal:
		return readDecimal(src, scale)
	case classBytes:
		n, m := binary.Uvarint(src)
		if m <= 0 || n > uint64(len(src)-m) {
			return types.Value{}, nil, fmt.Errorf("bad %s: %w", k, ErrCorrupt)
		}
		end := m + int(n)
		return types.StringValue(string(src[m:end])).WithKind(k), src[end:], nil
	case classList:
		if depth >= maxDepth {
			return types.Value{}, nil, fmt.Errorf("value nested deeper than %d levels: %w", maxDepth, ErrCorrupt)
		}
		n, m := binary.Uvarint(src)
		if m <= 0 || n > uint64(len(src)-m) { // every element takes a byte at least
			return types.Value{}, nil, fmt.Errorf("bad %s: %w", k, ErrCorrupt)
		}
		src = src[m:]
		elems := make([]types.Value, n)
		var err error
		for i := range elems {
			if elems[i], src, err = readAny(src, depth+1); err != nil {
				return types.Value{}, nil, err
			}
		}
		return types.ArrayValue(elems).WithKind(k), src, nil
	case classMap:
		if depth >= maxDepth {
			return types.Value{}, nil, fmt.Errorf("value nested deeper than %d levels: %w", maxDepth, ErrCorrupt)
		}
		n, m := binary.Uvarint(src)
		if m <= 0 || n > uint64(len(src)-m)/2 { // every entry takes two bytes at least
			return types.Value{}, nil, fmt.Errorf("bad MAP: %w", ErrCorrupt)
		}
		src = src[m:]
		mv := &types.MapValue{Keys: make([]types.Value, n), Values: make([]types.Value, n)}
		var err error
		for i := range mv.Keys {
			if mv.Keys[i], src, err = readAny(src, depth+1); err != nil {
				return types.Value{}, nil, err
			}
			if mv.Values[i], src, err = readAny(src, depth+1); err != nil {
				return types.Value{}, nil, err
			}
		}
		return types.NewMapValue(mv), src, nil
	}
	return types.Value{}, nil, fmt.Errorf("non-NULL value in a column of type NULL: %w", ErrCorrupt)
}

func readDecimal(src []byte, scale int) (types.Value, []byte, error) {
	if len(src) == 0 {
		return types.Value{}, nil, fmt.Errorf("bad DECIMAL: %w", ErrCorrupt)
	}
	tag := src[0]
	src = src[1:]
	if tag == 0 {
		if scale < 0 {
			return types.Value{}, nil, fmt.Errorf("DECIMAL without scale: %w", ErrCorrupt)
		}
	} else {
		if tag > 3 || len(src) == 0 {
			return types.Value{}, nil, fmt.Errorf("bad DECIMAL: %w", ErrCorrupt)
		}
		scale = int(src[0])
		src = src[1:]
	}
	if tag <= 1 {
		u, n := readVarint(src)
		if n <= 0 {
			return types.Value{}, nil, fmt.Errorf("bad DECIMAL: %w", ErrCorrupt)
		}
		return types.DecimalValue(u, scale), src[n:], nil
	}
	n, m := binary.Uvarint(src)
	if m <= 0 || n > uint64(len(src)-m) {
		return types.Value{}, nil, fmt.Errorf("bad DECIMAL: %w", ErrCorrupt)
	}
	end := m + int(n)
	u := new(big.Int).SetBytes(src[m:end])
	if tag == 3 {
		u.Neg(u)
	}
	return types.BigDecimalValue(u, scale), src[end:], nil
}

// readVarint reads a zigzag varint as binary.Varint does, but decodes it
// itself so that the common one-byte case is a branch, not a call.
func readVarint(src []byte) (int64, int) {
	if len(src) > 0 && src[0] < 0x80 {
		u := uint64(src[0])
		return int64(u>>1) ^ -int64(u&1), 1
	}
	u, n := binary.Uvarint(src)
	return int64(u>>1) ^ -int64(u&1), n
}
