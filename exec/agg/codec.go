package agg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"

	"github.com/sluicesql/sluice/types"
)

// AppendStateValue appends a self-describing binary encoding of v to dst:
// the encoding accumulators use for the values they keep in their state,
// which operators may use for the results they persist. DecodeStateValue
// reads it back. Unlike types.AppendKey it is lossless: a DECIMAL keeps its
// scale.
func AppendStateValue(dst []byte, v types.Value) []byte {
	k := v.Kind()
	dst = append(dst, byte(k))
	switch {
	case k == types.KindNull:
	case k == types.KindDecimal:
		dst = append(dst, byte(v.Scale()))
		if !v.IsBigDecimal() {
			dst = append(dst, 0)
			return binary.AppendVarint(dst, v.Unscaled())
		}
		u := v.BigUnscaled()
		sign := byte(1)
		if u.Sign() < 0 {
			sign = 2
		}
		b := u.Bytes()
		dst = append(dst, sign)
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case k.IsString() || k.IsBinary():
		dst = binary.AppendUvarint(dst, uint64(len(v.Str())))
		return append(dst, v.Str()...)
	case k == types.KindArray || k == types.KindMultiset || k == types.KindRow:
		e := v.Elems()
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		for _, x := range e {
			dst = AppendStateValue(dst, x)
		}
	case k == types.KindMap:
		m := v.Map()
		dst = binary.AppendUvarint(dst, uint64(len(m.Keys)))
		for i := range m.Keys {
			dst = AppendStateValue(dst, m.Keys[i])
			dst = AppendStateValue(dst, m.Values[i])
		}
	default:
		// Every other kind keeps its value in the integer field (FLOAT and
		// DOUBLE as their IEEE bits).
		dst = binary.AppendVarint(dst, v.Int())
	}
	return dst
}

var errCorrupt = errors.New("corrupt state")

// DecodeStateValue decodes a value written by AppendStateValue from the front of src
// and returns it with the rest of src.
func DecodeStateValue(src []byte) (types.Value, []byte, error) {
	if len(src) == 0 {
		return types.Value{}, nil, fmt.Errorf("cannot decode value: %w", errCorrupt)
	}
	k := types.Kind(src[0])
	src = src[1:]
	switch {
	case k == types.KindNull:
		return types.Value{}, src, nil
	case k == types.KindDecimal:
		if len(src) < 2 {
			return types.Value{}, nil, fmt.Errorf("cannot decode DECIMAL: %w", errCorrupt)
		}
		scale, form := int(src[0]), src[1]
		src = src[2:]
		if form == 0 {
			u, n := binary.Varint(src)
			if n <= 0 {
				return types.Value{}, nil, fmt.Errorf("cannot decode DECIMAL: %w", errCorrupt)
			}
			return types.DecimalValue(u, scale), src[n:], nil
		}
		b, rest, err := decodeBytes(src)
		if err != nil {
			return types.Value{}, nil, fmt.Errorf("cannot decode DECIMAL: %w", err)
		}
		u := new(big.Int).SetBytes(b)
		if form == 2 {
			u.Neg(u)
		}
		return types.BigDecimalValue(u, scale), rest, nil
	case k.IsString() || k.IsBinary():
		b, rest, err := decodeBytes(src)
		if err != nil {
			return types.Value{}, nil, fmt.Errorf("cannot decode %s: %w", k, err)
		}
		return types.StringValue(string(b)).WithKind(k), rest, nil
	case k == types.KindArray || k == types.KindMultiset || k == types.KindRow:
		n, m := binary.Uvarint(src)
		if m <= 0 || n > uint64(len(src)) {
			return types.Value{}, nil, fmt.Errorf("cannot decode %s: %w", k, errCorrupt)
		}
		src = src[m:]
		elems := make([]types.Value, n)
		for i := range elems {
			var err error
			if elems[i], src, err = DecodeStateValue(src); err != nil {
				return types.Value{}, nil, err
			}
		}
		return types.ArrayValue(elems).WithKind(k), src, nil
	case k == types.KindMap:
		n, m := binary.Uvarint(src)
		if m <= 0 || n > uint64(len(src)) {
			return types.Value{}, nil, fmt.Errorf("cannot decode MAP: %w", errCorrupt)
		}
		src = src[m:]
		mv := &types.MapValue{Keys: make([]types.Value, n), Values: make([]types.Value, n)}
		for i := range mv.Keys {
			var err error
			if mv.Keys[i], src, err = DecodeStateValue(src); err != nil {
				return types.Value{}, nil, err
			}
			if mv.Values[i], src, err = DecodeStateValue(src); err != nil {
				return types.Value{}, nil, err
			}
		}
		return types.NewMapValue(mv), src, nil
	case k < types.KindMultiset:
		i, n := binary.Varint(src)
		if n <= 0 {
			return types.Value{}, nil, fmt.Errorf("cannot decode %s: %w", k, errCorrupt)
		}
		return types.BigIntValue(i).WithKind(k), src[n:], nil
	}
	return types.Value{}, nil, fmt.Errorf("cannot decode value of kind %d: %w", k, errCorrupt)
}

func decodeBytes(src []byte) ([]byte, []byte, error) {
	n, m := binary.Uvarint(src)
	if m <= 0 || n > uint64(len(src)-m) {
		return nil, nil, errCorrupt
	}
	return src[m : m+int(n)], src[m+int(n):], nil
}

// stateReader reads the fields of an accumulator's state in order; the
// first failure sticks, so callers check err once at the end.
type stateReader struct {
	src []byte
	err error
}

func (r *stateReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.src)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.src)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *stateReader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.src) < 8 {
		r.err = errCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint64(r.src)
	r.src = r.src[8:]
	return v
}

func (r *stateReader) value() types.Value {
	if r.err != nil {
		return types.Value{}
	}
	v, rest, err := DecodeStateValue(r.src)
	if err != nil {
		r.err = err
		return types.Value{}
	}
	r.src = rest
	return v
}

func (r *stateReader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	b, rest, err := decodeBytes(r.src)
	if err != nil {
		r.err = err
		return nil
	}
	r.src = rest
	return b
}

// done returns the sticky error, or an error if input is left over.
func (r *stateReader) done(name string) error {
	if r.err == nil && len(r.src) != 0 {
		r.err = errCorrupt
	}
	if r.err != nil {
		return fmt.Errorf("cannot load %s state: %w", name, r.err)
	}
	return nil
}
