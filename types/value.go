package types

import (
	"math"
	"math/big"
)

// Value is one typed SQL value. The zero Value is NULL.
//
// Encoding by kind:
//
//	BOOLEAN                  i: 0 or 1
//	TINYINT..BIGINT          i
//	FLOAT, DOUBLE            i: math.Float64bits (FLOAT is widened to float64)
//	DECIMAL                  i: unscaled value, scale: scale; x: *big.Int when
//	                         the unscaled value does not fit in an int64
//	CHAR, VARCHAR            s
//	BINARY, VARBINARY        s (the bytes, as an immutable string)
//	DATE                     i: days since 1970-01-01
//	TIME                     i: microseconds since midnight
//	TIMESTAMP, _LTZ          i: microseconds since the epoch
//	INTERVAL DAY TO SECOND   i: microseconds
//	INTERVAL YEAR TO MONTH   i: months
//	ARRAY, MULTISET, ROW     x: []Value
//	MAP                      x: *MapValue
type Value struct {
	kind  Kind
	scale uint8
	i     int64
	s     string
	x     any
}

// MapValue is the value of a MAP: parallel key and value slices, in
// insertion order, without duplicate keys.
type MapValue struct {
	Keys   []Value
	Values []Value
}

// NullValue is SQL NULL.
var NullValue = Value{}

// Kind returns the kind of the value; KindNull for NULL.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Constructors.

// BoolValue returns a BOOLEAN value.
func BoolValue(b bool) Value {
	if b {
		return Value{kind: KindBoolean, i: 1}
	}
	return Value{kind: KindBoolean}
}

// IntValue returns an integer value of kind k (TINYINT..BIGINT).
func IntValue(k Kind, n int64) Value { return Value{kind: k, i: n} }

// BigIntValue returns a BIGINT value.
func BigIntValue(n int64) Value { return Value{kind: KindBigInt, i: n} }

// Int32Value returns an INT value.
func Int32Value(n int32) Value { return Value{kind: KindInt, i: int64(n)} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(f float64) Value { return Value{kind: KindDouble, i: int64(math.Float64bits(f))} }

// FloatValue returns a FLOAT value (stored widened to float64).
func FloatValue(f float32) Value {
	return Value{kind: KindFloat, i: int64(math.Float64bits(float64(f)))}
}

// DecimalValue returns a DECIMAL value with the given unscaled value and scale.
func DecimalValue(unscaled int64, scale int) Value {
	return Value{kind: KindDecimal, i: unscaled, scale: uint8(scale)}
}

// BigDecimalValue returns a DECIMAL value from a big unscaled value. It uses
// the compact int64 form when the value fits.
func BigDecimalValue(unscaled *big.Int, scale int) Value {
	if unscaled.IsInt64() {
		return Value{kind: KindDecimal, i: unscaled.Int64(), scale: uint8(scale)}
	}
	return Value{kind: KindDecimal, x: new(big.Int).Set(unscaled), scale: uint8(scale)}
}

// StringValue returns a VARCHAR value.
func StringValue(s string) Value { return Value{kind: KindVarChar, s: s} }

// CharValue returns a CHAR value.
func CharValue(s string) Value { return Value{kind: KindChar, s: s} }

// BytesValue returns a VARBINARY value; b is copied.
func BytesValue(b []byte) Value { return Value{kind: KindVarBinary, s: string(b)} }

// DateValue returns a DATE value from days since the epoch.
func DateValue(days int64) Value { return Value{kind: KindDate, i: days} }

// TimeValue returns a TIME value from microseconds since midnight.
func TimeValue(micros int64) Value { return Value{kind: KindTime, i: micros} }

// TimestampValue returns a TIMESTAMP value from microseconds since the epoch.
func TimestampValue(micros int64) Value { return Value{kind: KindTimestamp, i: micros} }

// TimestampLTZValue returns a TIMESTAMP_LTZ value from microseconds since the epoch.
func TimestampLTZValue(micros int64) Value { return Value{kind: KindTimestampLTZ, i: micros} }

// IntervalDayTimeValue returns an INTERVAL DAY TO SECOND value in microseconds.
func IntervalDayTimeValue(micros int64) Value { return Value{kind: KindIntervalDayTime, i: micros} }

// IntervalYearMonthValue returns an INTERVAL YEAR TO MONTH value in months.
func IntervalYearMonthValue(months int64) Value {
	return Value{kind: KindIntervalYearMonth, i: months}
}

// ArrayValue returns an ARRAY value holding elems (not copied).
func ArrayValue(elems []Value) Value { return Value{kind: KindArray, x: elems} }

// MultisetValue returns a MULTISET value holding elems (not copied).
func MultisetValue(elems []Value) Value { return Value{kind: KindMultiset, x: elems} }

// RowValue returns a ROW value holding fields (not copied).
func RowValue(fields []Value) Value { return Value{kind: KindRow, x: fields} }

// NewMapValue returns a MAP value.
func NewMapValue(m *MapValue) Value { return Value{kind: KindMap, x: m} }

// WithKind returns v relabelled as kind k, for conversions that keep the
// representation (e.g. INT to BIGINT, VARCHAR to CHAR, TIMESTAMP to
// TIMESTAMP_LTZ). NULL stays NULL.
func (v Value) WithKind(k Kind) Value {
	if v.kind == KindNull {
		return v
	}
	v.kind = k
	return v
}

// Accessors. Each assumes the value has a matching kind and is not NULL.

// Bool returns a BOOLEAN value.
func (v Value) Bool() bool { return v.i != 0 }

// Int returns an integer, DATE, TIME, TIMESTAMP or INTERVAL value.
func (v Value) Int() int64 { return v.i }

// Float returns a FLOAT or DOUBLE value.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.i)) }

// Str returns a string or binary value.
func (v Value) Str() string { return v.s }

// Scale returns the scale of a DECIMAL value.
func (v Value) Scale() int { return int(v.scale) }

// IsBigDecimal reports whether a DECIMAL value's unscaled value is held as a
// *big.Int because it does not fit in an int64.
func (v Value) IsBigDecimal() bool { _, ok := v.x.(*big.Int); return ok }

// Unscaled returns the unscaled value of a DECIMAL as an int64; valid only
// when !IsBigDecimal().
func (v Value) Unscaled() int64 { return v.i }

// BigUnscaled returns the unscaled value of a DECIMAL as a new *big.Int.
func (v Value) BigUnscaled() *big.Int {
	if b, ok := v.x.(*big.Int); ok {
		return new(big.Int).Set(b)
	}
	return big.NewInt(v.i)
}

// Elems returns the elements of an ARRAY or MULTISET or the fields of a ROW.
// The slice must not be modified.
func (v Value) Elems() []Value { e, _ := v.x.([]Value); return e }

// Map returns a MAP value. It must not be modified.
func (v Value) Map() *MapValue { m, _ := v.x.(*MapValue); return m }
