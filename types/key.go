package types

import (
	"encoding/binary"
	"math"
	"math/big"
)

// AppendKey appends a binary encoding of v to dst, for use as a grouping or
// join key. Two values that are Equal and of the same kind encode to the same
// bytes, and the encoding of a sequence of values is unambiguous. DECIMAL
// values are normalised (trailing zeros of the scale removed) so that 1.0 and
// 1.00 group together; -0.0 and 0.0 encode alike, and so do all NaNs.
// Kinds that differ only in width or padding encode alike (KeyKind): an
// INT and a BIGINT join key match, so do a CHAR and a VARCHAR one.
func AppendKey(dst []byte, v Value) []byte {
	dst = append(dst, byte(KeyKind(v.kind)))
	switch v.kind {
	case KindNull:
	case KindFloat, KindDouble:
		f := v.Float()
		if f == 0 {
			f = 0
		} else if math.IsNaN(f) {
			f = math.NaN()
		}
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case KindDecimal:
		if v.x == nil {
			u, s := v.i, int(v.scale)
			for s > 0 && u%10 == 0 {
				u, s = u/10, s-1
			}
			dst = append(dst, byte(s), 0)
			return binary.AppendVarint(dst, u)
		}
		u, s := v.BigUnscaled(), int(v.scale)
		ten, r := big.NewInt(10), new(big.Int)
		for s > 0 {
			q, m := new(big.Int).QuoRem(u, ten, r)
			if m.Sign() != 0 {
				break
			}
			u, s = q, s-1
		}
		if u.IsInt64() {
			dst = append(dst, byte(s), 0)
			return binary.AppendVarint(dst, u.Int64())
		}
		dst = append(dst, byte(s))
		b := u.Bytes()
		dst = append(dst, byte(u.Sign()+3)) // 2 or 4: never the int64 marker 0
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	case KindChar, KindVarChar, KindBinary, KindVarBinary:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	case KindArray, KindMultiset, KindRow:
		e := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		for _, x := range e {
			dst = AppendKey(dst, x)
		}
	case KindMap:
		m := v.Map()
		dst = binary.AppendUvarint(dst, uint64(len(m.Keys)))
		for i := range m.Keys {
			dst = AppendKey(dst, m.Keys[i])
			dst = AppendKey(dst, m.Values[i])
		}
	default:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v.i))
	}
	return dst
}

// KeyKind is the kind whose encoding AppendKey gives values of kind k:
// integers encode as BIGINT, CHAR as VARCHAR, BINARY as VARBINARY, FLOAT as
// DOUBLE. Two key columns can be compared through their encodings when
// their kinds have the same KeyKind.
func KeyKind(k Kind) Kind {
	switch {
	case k.IsInteger():
		return KindBigInt
	case k == KindChar:
		return KindVarChar
	case k == KindBinary:
		return KindVarBinary
	case k == KindFloat:
		return KindDouble
	}
	return k
}
