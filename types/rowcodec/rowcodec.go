package rowcodec

import (
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/types"
)

// Version is the payload format version, the first byte of every payload.
const Version byte = 1

// ErrCorrupt is wrapped by every error the decoder returns for input it
// cannot decode.
var ErrCorrupt = errors.New("rowcodec: corrupt payload")

// maxDepth bounds the nesting of ARRAY, MULTISET, ROW and MAP values, on
// both sides, so that neither a cyclic value nor a hostile payload can
// exhaust the stack.
const maxDepth = 64

// Row head bits.
const (
	headKindMask   = 0x03
	headOriginMask = 0x0c
	headNulls      = 0x10
	headForeign    = 0x20
	headReserved   = 0xc0

	originExplicit = 0 << 2
	originNext     = 1 << 2
	originSame     = 2 << 2
)

// class is how a kind's values are written.
type class uint8

const (
	classInvalid class = iota
	classNull
	classBool
	classInt
	classFloat
	classDecimal
	classBytes
	classList
	classMap
)

// numKinds is one more than the highest kind the codec knows.
const numKinds = int(types.KindMultiset) + 1

func classOf(k types.Kind) class {
	switch {
	case k == types.KindNull:
		return classNull
	case k == types.KindBoolean:
		return classBool
	case k.IsInteger(), k == types.KindDate, k == types.KindTime, k.IsTimestamp(),
		k == types.KindIntervalDayTime, k == types.KindIntervalYearMonth:
		return classInt
	case k == types.KindFloat || k == types.KindDouble:
		return classFloat
	case k == types.KindDecimal:
		return classDecimal
	case k.IsString() || k.IsBinary():
		return classBytes
	case k == types.KindArray || k == types.KindMultiset || k == types.KindRow:
		return classList
	case k == types.KindMap:
		return classMap
	}
	return classInvalid
}

// column is what the codec needs of a column type.
type column struct {
	kind  types.Kind
	class class
	scale int // DECIMAL scale; -1 when the column has none
}

// Codec encodes and decodes rows of one schema. It is immutable and may be
// shared by any number of encoders and decoders.
type Codec struct {
	cols      []column
	bitmapLen int
	header    []byte
}

// New returns a codec for rows whose columns have the given types.
func New(cols []types.Type) (*Codec, error) {
	c := &Codec{cols: make([]column, len(cols)), bitmapLen: (len(cols) + 7) / 8}
	for i, t := range cols {
		cl := classOf(t.Kind)
		if cl == classInvalid {
			return nil, fmt.Errorf("cannot build row codec: column %d has unknown type kind %d", i, t.Kind)
		}
		col := column{kind: t.Kind, class: cl, scale: -1}
		if t.Kind == types.KindDecimal {
			col.scale = t.Scale
		}
		c.cols[i] = col
	}
	c.header = appendUvarint([]byte{Version}, uint64(len(cols)))
	return c, nil
}

// Columns returns the number of columns of the codec's rows.
func (c *Codec) Columns() int { return len(c.cols) }
