package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// class is how a column's values are laid out in a record.
type class uint8

const (
	classNull    class = iota
	classBool          // 1 byte, 0 or 1
	classInt           // zigzag varint: integers, DATE, TIME, TIMESTAMP[_LTZ], INTERVAL
	classFloat         // 8 bytes, IEEE 754 bits, little endian
	classDecimal       // tag 0: varint unscaled at the column's scale
	//                    tag 1: scale byte, varint unscaled
	//                    tag 2|3: scale byte, uvarint n, n bytes of magnitude (3: negative)
	classBytes  // uvarint n, n bytes: CHAR, VARCHAR, BINARY, VARBINARY
	classNested // an any-value: ARRAY, MULTISET, ROW, MAP
)

func classOf(k types.Kind) class {
	switch {
	case k == types.KindNull:
		return classNull
	case k == types.KindBoolean:
		return classBool
	case k.IsInteger(), k == types.KindDate, k == types.KindTime, k.IsTimestamp(),
		k == types.KindIntervalDayTime, k == types.KindIntervalYearMonth:
		return classInt
	case k == types.KindFloat, k == types.KindDouble:
		return classFloat
	case k == types.KindDecimal:
		return classDecimal
	case k.IsString(), k.IsBinary():
		return classBytes
	}
	return classNested
}

// column is a non-key column as the codec sees it.
type column struct {
	kind  types.Kind
	class class
	scale int // DECIMAL
	// clone: strings are copied out of the arena, not pointed into (a
	// spilled arena is unmapped when its index goes).
	clone bool
}

// compatible reports whether a value of kind k can be stored in a column of
// kind c and read back as c without changing its meaning: the kinds share a
// representation (INT and BIGINT, CHAR and VARCHAR), or both are nested.
func compatible(k, c types.Kind) bool {
	if types.KeyKind(k) == types.KeyKind(c) {
		return true
	}
	return classOf(k) == classNested && classOf(c) == classNested
}

// appendValue appends the non-NULL value v of column c.
func appendValue(dst []byte, v types.Value, c *column) []byte {
	switch c.class {
	case classBool:
		if v.Bool() {
			return append(dst, 1)
		}
		return append(dst, 0)
	case classInt:
		return binary.AppendVarint(dst, v.Int())
	case classFloat:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float()))
	case classDecimal:
		return appendDecimal(dst, v, c.scale)
	case classBytes:
		s := v.Str()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	return appendAny(dst, v)
}

func appendDecimal(dst []byte, v types.Value, colScale int) []byte {
	if !v.IsBigDecimal() {
		if v.Scale() == colScale {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 1, byte(v.Scale()))
		}
		return binary.AppendVarint(dst, v.Unscaled())
	}
	u := v.BigUnscaled()
	tag := byte(2)
	if u.Sign() < 0 {
		tag = 3
	}
	b := u.Bytes()
	dst = append(dst, tag, byte(v.Scale()))
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendAny appends v with its kind first, for the elements of nested values.
func appendAny(dst []byte, v types.Value) []byte {
	k := v.Kind()
	dst = append(dst, byte(k))
	switch cl := classOf(k); cl {
	case classNull:
		return dst
	case classDecimal:
		return appendDecimal(dst, v, -1) // never tag 0: no column scale here
	case classNested:
		if k == types.KindMap {
			m := v.Map()
			dst = binary.AppendUvarint(dst, uint64(len(m.Keys)))
			for i := range m.Keys {
				dst = appendAny(dst, m.Keys[i])
				dst = appendAny(dst, m.Values[i])
			}
			return dst
		}
		e := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		for _, x := range e {
			dst = appendAny(dst, x)
		}
		return dst
	default:
		return appendValue(dst, v, &column{kind: k, class: cl})
	}
}

// readValue decodes a value of column c at src[p:] and returns it with the
// position after it. Strings and binary values point into src unless
// c.clone: src must then be immutable for as long as they are referenced. The arena is our own
// output, so it is trusted: a malformed record is an impossible state.
func readValue(src []byte, p int, c *column) (types.Value, int) {
	switch c.class {
	case classBool:
		return types.BoolValue(src[p] != 0), p + 1
	case classInt:
		x, n := binary.Varint(src[p:])
		return types.IntValue(c.kind, x), p + n
	case classFloat:
		f := math.Float64frombits(binary.LittleEndian.Uint64(src[p:]))
		v := types.DoubleValue(f)
		if c.kind == types.KindFloat {
			v = v.WithKind(types.KindFloat) // stored widened, as types does
		}
		return v, p + 8
	case classDecimal:
		return readDecimal(src, p, c.scale)
	case classBytes:
		l, n := binary.Uvarint(src[p:])
		p += n
		end := p + int(l)
		if l == 0 {
			return types.StringValue("").WithKind(c.kind), end
		}
		if c.clone {
			return types.StringValue(string(src[p:end])).WithKind(c.kind), end
		}
		s := unsafe.String(&src[p], int(l))
		return types.StringValue(s).WithKind(c.kind), end
	}
	return readAny(src, p, c.clone)
}

func readDecimal(src []byte, p, colScale int) (types.Value, int) {
	tag := src[p]
	p++
	scale := colScale
	if tag != 0 {
		scale = int(src[p])
		p++
	}
	if tag <= 1 {
		u, n := binary.Varint(src[p:])
		return types.DecimalValue(u, scale), p + n
	}
	l, n := binary.Uvarint(src[p:])
	p += n
	u := new(big.Int).SetBytes(src[p : p+int(l)])
	if tag == 3 {
		u.Neg(u)
	}
	return types.BigDecimalValue(u, scale), p + int(l)
}

func readAny(src []byte, p int, clone bool) (types.Value, int) {
	k := types.Kind(src[p])
	p++
	switch cl := classOf(k); cl {
	case classNull:
		return types.NullValue, p
	case classNested:
		l, n := binary.Uvarint(src[p:])
		p += n
		if k == types.KindMap {
			m := &types.MapValue{Keys: make([]types.Value, l), Values: make([]types.Value, l)}
			for i := range m.Keys {
				m.Keys[i], p = readAny(src, p, clone)
				m.Values[i], p = readAny(src, p, clone)
			}
			return types.NewMapValue(m), p
		}
		e := make([]types.Value, l)
		for i := range e {
			e[i], p = readAny(src, p, clone)
		}
		switch k {
		case types.KindRow:
			return types.RowValue(e), p
		case types.KindMultiset:
			return types.MultisetValue(e), p
		}
		return types.ArrayValue(e), p
	default:
		return readValue(src, p, &column{kind: k, class: cl, scale: -1, clone: clone})
	}
}

// checkValue reports why v cannot be stored in column c, if it cannot.
func checkValue(v types.Value, c *column) error {
	if !compatible(v.Kind(), c.kind) {
		return fmt.Errorf("a %s value in a %s column", v.Kind(), c.kind)
	}
	return nil
}
