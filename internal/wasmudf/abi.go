package wasmudf

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluicesql/sluice/types"
	"github.com/tetratelabs/wazero/api"
)

// slot is how one SQL value crosses the boundary.
type slot uint8

const (
	slotI32   slot = iota // BOOLEAN, TINYINT, SMALLINT, INT, DATE
	slotI64               // BIGINT, DECIMAL(p ≤ 18), TIME, TIMESTAMP, TIMESTAMP_LTZ
	slotF32               // FLOAT
	slotF64               // DOUBLE
	slotBytes             // CHAR, VARCHAR, STRING, BINARY, VARBINARY, BYTES: (ptr, len)
)

// maxDecimalPrecision is the largest DECIMAL precision whose unscaled
// value fits an i64.
const maxDecimalPrecision = 18

// slotOf maps a SQL type to its slot, or explains why it has none.
func slotOf(t types.Type) (slot, error) {
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindDate:
		return slotI32, nil
	case types.KindBigInt, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		return slotI64, nil
	case types.KindDecimal:
		if t.Precision > maxDecimalPrecision {
			return 0, fmt.Errorf("%s has no WebAssembly mapping: a DECIMAL crosses as its unscaled i64, so its precision must be at most %d", t, maxDecimalPrecision)
		}
		return slotI64, nil
	case types.KindFloat:
		return slotF32, nil
	case types.KindDouble:
		return slotF64, nil
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary:
		return slotBytes, nil
	}
	return 0, fmt.Errorf("%s has no WebAssembly mapping (BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p ≤ 18), CHAR, VARCHAR, STRING, BINARY, VARBINARY, BYTES, DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ have one)", t)
}

// paramTypes appends the wasm parameters of a value in slot s.
func (s slot) params(dst []api.ValueType) []api.ValueType {
	switch s {
	case slotI32:
		return append(dst, api.ValueTypeI32)
	case slotI64:
		return append(dst, api.ValueTypeI64)
	case slotF32:
		return append(dst, api.ValueTypeF32)
	case slotF64:
		return append(dst, api.ValueTypeF64)
	}
	return append(dst, api.ValueTypeI32, api.ValueTypeI32)
}

// result is the wasm result of a value in slot s: byte strings come back
// as one i64, the pointer in the low 32 bits and the length in the high.
func (s slot) result() api.ValueType {
	switch s {
	case slotI32:
		return api.ValueTypeI32
	case slotF32:
		return api.ValueTypeF32
	case slotF64:
		return api.ValueTypeF64
	}
	return api.ValueTypeI64
}

// sig renders a wasm signature as the text format writes it.
func sig(params, results []api.ValueType) string {
	var b strings.Builder
	b.WriteString("(")
	for i, p := range params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(api.ValueTypeName(p))
	}
	b.WriteString(") -> (")
	for i, r := range results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(api.ValueTypeName(r))
	}
	b.WriteString(")")
	return b.String()
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// encode turns a non-NULL value of type t (slot s, not slotBytes) into its
// wasm word.
func encode(v types.Value, t types.Type, s slot) (uint64, error) {
	switch s {
	case slotI32:
		if t.Kind == types.KindBoolean {
			if v.Bool() {
				return 1, nil
			}
			return 0, nil
		}
		return uint64(uint32(int32(v.Int()))), nil
	case slotI64:
		if t.Kind == types.KindDecimal {
			if v.Scale() != t.Scale {
				v = types.Rescale(v, t.Scale)
			}
			if v.IsBigDecimal() {
				return 0, fmt.Errorf("the value does not fit %s", t)
			}
			return uint64(v.Unscaled()), nil
		}
		return uint64(v.Int()), nil
	case slotF32:
		return uint64(math.Float32bits(float32(v.Float()))), nil
	case slotF64:
		return math.Float64bits(v.Float()), nil
	}
	panic("wasmudf: encode of a byte string")
}

// decode turns a wasm word of slot s (not slotBytes) into a value of type t.
func decode(w uint64, t types.Type) (types.Value, error) {
	switch t.Kind {
	case types.KindBoolean:
		return types.BoolValue(uint32(w) != 0), nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt:
		n := int64(int32(uint32(w)))
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch t.Kind {
		case types.KindTinyInt:
			lo, hi = math.MinInt8, math.MaxInt8
		case types.KindSmallInt:
			lo, hi = math.MinInt16, math.MaxInt16
		}
		if n < lo || n > hi {
			return types.NullValue, fmt.Errorf("the result %d is out of range for %s", n, t)
		}
		return types.IntValue(t.Kind, n), nil
	case types.KindDate:
		return types.DateValue(int64(int32(uint32(w)))), nil
	case types.KindBigInt:
		return types.BigIntValue(int64(w)), nil
	case types.KindTime:
		n := int64(w)
		if n < 0 || n >= 86_400_000_000 {
			return types.NullValue, fmt.Errorf("the result %d is not a time of day in microseconds", n)
		}
		return types.TimeValue(n), nil
	case types.KindTimestamp:
		return types.TimestampValue(int64(w)), nil
	case types.KindTimestampLTZ:
		return types.TimestampLTZValue(int64(w)), nil
	case types.KindDecimal:
		n := int64(w)
		if bound := pow10(t.Precision); n >= bound || n <= -bound {
			return types.NullValue, fmt.Errorf("the unscaled result %d does not fit %s", n, t)
		}
		return types.DecimalValue(n, t.Scale), nil
	case types.KindFloat:
		return types.FloatValue(math.Float32frombits(uint32(w))), nil
	case types.KindDouble:
		return types.DoubleValue(math.Float64frombits(w)), nil
	}
	panic("wasmudf: decode of a byte string")
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// bytesValue makes a value of type t (a string or binary kind) from b.
func bytesValue(b []byte, t types.Type) types.Value {
	switch t.Kind {
	case types.KindChar:
		return types.CharValue(string(b))
	case types.KindVarChar:
		return types.StringValue(string(b))
	}
	return types.BytesValue(b).WithKind(t.Kind)
}
