package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cast converts v from type from to type to with Flink's CAST semantics, in
// the UTC session time zone; see CastIn.
func Cast(v Value, from, to Type) (Value, error) { return CastIn(v, from, to, nil) }

// CastIn converts v from type from to type to with Flink's CAST semantics.
// loc is the session time zone (nil means UTC); it matters for conversions
// between TIMESTAMP_LTZ and TIMESTAMP, DATE, TIME and strings.
//
// NULL casts to NULL. An invalid conversion (a string that is not a number,
// a kind that cannot be cast to the target) returns an error, which CAST
// turns into a job failure and TRY_CAST into NULL. The rules:
//
//   - Integer targets: values out of the target's range are an error (Flink
//     narrows like Java and wraps silently; Sluice refuses to invent data).
//     DOUBLE, FLOAT and DECIMAL truncate toward zero; NaN is an error.
//     Strings are trimmed and may carry a fraction, which is truncated.
//   - DECIMAL(p, s) targets round HALF_UP to s; a value that does not fit
//     DECIMAL(p, s) becomes NULL, as in Flink.
//   - CHAR(n) truncates to n characters and pads with spaces; VARCHAR(n)
//     truncates. BINARY(n) pads with zero bytes; VARBINARY(n) truncates.
//   - BYTES to STRING decodes UTF-8 (malformed sequences become U+FFFD);
//     STRING to BYTES encodes UTF-8. Other kinds format as FormatValue.
//   - BOOLEAN from strings accepts, case-insensitively, true/t/yes/y/1 and
//     false/f/no/n/0; from numbers, non-zero is TRUE. BOOLEAN to numbers
//     is 1 or 0.
//   - Strings to DATE, TIME and TIMESTAMP accept the forms of ParseDate,
//     ParseTime and ParseTimestamp. A string without a zone read as
//     TIMESTAMP_LTZ is a wall-clock time in loc.
//   - TIMESTAMP to TIMESTAMP_LTZ reads the wall-clock time in loc, and back.
//     Lower target precisions truncate fraction digits.
//   - Numbers to TIMESTAMP_LTZ are seconds since the epoch.
//   - ARRAY, MULTISET, MAP and ROW convert element-wise (ROW by position).
func CastIn(v Value, from, to Type, loc *time.Location) (Value, error) {
	if v.kind == KindNull {
		return NullValue, nil
	}
	k := v.kind
	switch to.Kind {
	case KindBoolean:
		return castToBoolean(v)
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
		return castToInteger(v, to.Kind)
	case KindFloat, KindDouble:
		return castToFloat(v, to.Kind)
	case KindDecimal:
		return castToDecimal(v, to)
	case KindChar, KindVarChar:
		var s string
		switch {
		case k.IsString():
			s = v.s
		case k.IsBinary():
			s = v.s
			if !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
		default:
			s = string(AppendValueIn(nil, v, from, loc))
		}
		return fitString(s, to), nil
	case KindBinary, KindVarBinary:
		if !k.IsString() && !k.IsBinary() {
			return NullValue, castError(v, from, to, "")
		}
		return fitBinary(v.s, to), nil
	case KindDate:
		switch k {
		case KindDate:
			return v, nil
		case KindTimestamp:
			return DateValue(FloorDiv(v.i, MicrosPerDay)), nil
		case KindTimestampLTZ:
			return DateValue(FloorDiv(InstantToLocal(v.i, loc), MicrosPerDay)), nil
		case KindChar, KindVarChar:
			d, err := ParseDate(v.s)
			if err != nil {
				ts, zoned, err2 := parseTimestamp(v.s)
				if err2 != nil {
					return NullValue, castError(v, from, to, "")
				}
				if zoned {
					ts = InstantToLocal(ts, loc)
				}
				d = FloorDiv(ts, MicrosPerDay)
			}
			return DateValue(d), nil
		}
	case KindTime:
		switch k {
		case KindTime:
			return TimeValue(TruncatePrecision(v.i, to.Precision)), nil
		case KindTimestamp:
			return TimeValue(TruncatePrecision(FloorMod(v.i, MicrosPerDay), to.Precision)), nil
		case KindTimestampLTZ:
			return TimeValue(TruncatePrecision(FloorMod(InstantToLocal(v.i, loc), MicrosPerDay), to.Precision)), nil
		case KindChar, KindVarChar:
			t, err := ParseTime(v.s)
			if err != nil {
				return NullValue, castError(v, from, to, "")
			}
			return TimeValue(TruncatePrecision(t, to.Precision)), nil
		}
	case KindTimestamp:
		switch k {
		case KindTimestamp:
			return TimestampValue(TruncatePrecision(v.i, to.Precision)), nil
		case KindTimestampLTZ:
			return TimestampValue(TruncatePrecision(InstantToLocal(v.i, loc), to.Precision)), nil
		case KindDate:
			return TimestampValue(v.i * MicrosPerDay), nil
		case KindTime:
			return TimestampValue(v.i), nil
		case KindChar, KindVarChar:
			ts, err := ParseTimestamp(v.s)
			if err != nil {
				return NullValue, castError(v, from, to, "")
			}
			return TimestampValue(TruncatePrecision(ts, to.Precision)), nil
		}
	case KindTimestampLTZ:
		switch k {
		case KindTimestampLTZ:
			return TimestampLTZValue(TruncatePrecision(v.i, to.Precision)), nil
		case KindTimestamp:
			return TimestampLTZValue(TruncatePrecision(LocalToInstant(v.i, loc), to.Precision)), nil
		case KindDate:
			return TimestampLTZValue(LocalToInstant(v.i*MicrosPerDay, loc)), nil
		case KindChar, KindVarChar:
			ts, zoned, err := parseTimestamp(v.s)
			if err != nil {
				return NullValue, castError(v, from, to, "")
			}
			if !zoned {
				ts = LocalToInstant(ts, loc)
			}
			return TimestampLTZValue(TruncatePrecision(ts, to.Precision)), nil
		case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
			if v.i > MaxTimestamp/MicrosPerSecond || v.i < MinTimestamp/MicrosPerSecond {
				return NullValue, castError(v, from, to, "out of range")
			}
			return TimestampLTZValue(v.i * MicrosPerSecond), nil
		case KindDecimal, KindFloat, KindDouble:
			// In seconds, where the bounds are exact; NaN fails too.
			x := ToFloat(v)
			if !(x >= float64(MinTimestamp/MicrosPerSecond) && x < float64(MaxTimestamp/MicrosPerSecond+1)) {
				return NullValue, castError(v, from, to, "out of range")
			}
			f := x * float64(MicrosPerSecond)
			return TimestampLTZValue(TruncatePrecision(int64(f), to.Precision)), nil
		}
	case KindIntervalDayTime, KindIntervalYearMonth:
		if k == to.Kind {
			return v, nil
		}
	case KindArray, KindMultiset:
		if k != KindArray && k != KindMultiset || to.Elem == nil {
			break
		}
		fe := elemType(from.Elem)
		elems := v.Elems()
		out := make([]Value, len(elems))
		for i, e := range elems {
			c, err := CastIn(e, orKind(fe, e), *to.Elem, loc)
			if err != nil {
				return NullValue, err
			}
			out[i] = c
		}
		if to.Kind == KindArray {
			return ArrayValue(out), nil
		}
		return MultisetValue(out), nil
	case KindMap:
		if k != KindMap || to.Elem == nil || to.Value == nil {
			break
		}
		fk, fv := elemType(from.Elem), elemType(from.Value)
		m := v.Map()
		out := &MapValue{Keys: make([]Value, len(m.Keys)), Values: make([]Value, len(m.Values))}
		for i := range m.Keys {
			c, err := CastIn(m.Keys[i], orKind(fk, m.Keys[i]), *to.Elem, loc)
			if err != nil {
				return NullValue, err
			}
			out.Keys[i] = c
			if c, err = CastIn(m.Values[i], orKind(fv, m.Values[i]), *to.Value, loc); err != nil {
				return NullValue, err
			}
			out.Values[i] = c
		}
		return NewMapValue(out), nil
	case KindRow:
		elems := v.Elems()
		if k != KindRow || len(elems) != len(to.Fields) {
			break
		}
		out := make([]Value, len(elems))
		for i, e := range elems {
			ft := Type{Kind: e.kind}
			if from.Kind == KindRow && i < len(from.Fields) {
				ft = from.Fields[i].Type
			}
			c, err := CastIn(e, ft, to.Fields[i].Type, loc)
			if err != nil {
				return NullValue, err
			}
			out[i] = c
		}
		return RowValue(out), nil
	}
	return NullValue, castError(v, from, to, "unsupported conversion")
}

func elemType(t *Type) Type {
	if t == nil {
		return Type{}
	}
	return *t
}

// orKind returns t, or a type of v's kind when t is unknown.
func orKind(t Type, v Value) Type {
	if t.Kind == KindNull {
		return Type{Kind: v.kind}
	}
	return t
}

func castError(v Value, from, to Type, why string) error {
	ft := from
	if ft.Kind != v.kind {
		ft = Type{Kind: v.kind}
	}
	var lit string
	switch {
	case v.kind.IsString():
		lit = "'" + v.s + "'"
	case v.kind == KindArray || v.kind == KindMap || v.kind == KindRow || v.kind == KindMultiset:
		lit = ft.String()
	default:
		lit = FormatValue(v, ft) + " of type " + ft.WithNullable(true).String()
	}
	if why != "" {
		return fmt.Errorf("cannot cast %s to %s: %s", lit, to.WithNullable(true), why)
	}
	return fmt.Errorf("cannot cast %s to %s", lit, to.WithNullable(true))
}

func castToBoolean(v Value) (Value, error) {
	switch {
	case v.kind == KindBoolean:
		return v, nil
	case v.kind.IsInteger():
		return BoolValue(v.i != 0), nil
	case v.kind == KindFloat || v.kind == KindDouble:
		return BoolValue(v.Float() != 0), nil
	case v.kind == KindDecimal:
		return BoolValue(DecimalSign(v) != 0), nil
	case v.kind.IsString():
		s := trimSpace(v.s)
		switch {
		case strings.EqualFold(s, "true"), strings.EqualFold(s, "t"), strings.EqualFold(s, "yes"),
			strings.EqualFold(s, "y"), s == "1":
			return BoolValue(true), nil
		case strings.EqualFold(s, "false"), strings.EqualFold(s, "f"), strings.EqualFold(s, "no"),
			strings.EqualFold(s, "n"), s == "0":
			return BoolValue(false), nil
		}
	}
	return NullValue, castError(v, Type{Kind: v.kind}, Boolean, "")
}

// IntegerRange returns the smallest and largest value of an integer kind.
func IntegerRange(k Kind) (lo, hi int64) {
	switch k {
	case KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func castToInteger(v Value, to Kind) (Value, error) {
	lo, hi := IntegerRange(to)
	var n int64
	switch {
	case v.kind.IsInteger():
		n = v.i
	case v.kind == KindBoolean:
		n = v.i
	case v.kind == KindFloat || v.kind == KindDouble:
		f := math.Trunc(v.Float())
		if math.IsNaN(f) || f < float64(lo) || f >= float64(hi)+1 {
			return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "out of range")
		}
		n = int64(f)
	case v.kind == KindDecimal:
		u, b, s := decParts(v)
		if b == nil {
			if s <= 18 {
				n = u / pow10[s]
			}
		} else {
			q := new(big.Int).Quo(b, pow10Big(s))
			if !q.IsInt64() {
				return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "out of range")
			}
			n = q.Int64()
		}
	case v.kind.IsString():
		var err error
		if n, err = parseIntTrunc(trimSpace(v.s)); err != nil {
			return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, err.Error())
		}
	default:
		return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "unsupported conversion")
	}
	if n < lo || n > hi {
		return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "out of range")
	}
	return Value{kind: to, i: n}, nil
}

// parseIntTrunc parses [+-]digits[.digits], truncating the fraction, as
// Flink's string-to-integer conversion does.
func parseIntTrunc(s string) (int64, error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if u > (math.MaxUint64-9)/10 {
			return 0, fmt.Errorf("out of range")
		}
		u = u*10 + uint64(s[i]-'0')
	}
	digits := i - start
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
		digits += i - f
	}
	if digits == 0 || i != len(s) {
		return 0, fmt.Errorf("invalid number")
	}
	if neg {
		if u > 1<<63 {
			return 0, fmt.Errorf("out of range")
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("out of range")
	}
	return int64(u), nil
}

func castToFloat(v Value, to Kind) (Value, error) {
	var f float64
	switch {
	case v.kind.IsInteger(), v.kind == KindBoolean:
		f = float64(v.i)
	case v.kind == KindFloat || v.kind == KindDouble:
		f = v.Float()
	case v.kind == KindDecimal:
		// Correctly rounded, as Java's BigDecimal.doubleValue.
		var buf [48]byte
		f, _ = strconv.ParseFloat(string(AppendDecimal(buf[:0], v)), 64)
	case v.kind.IsString():
		s := trimSpace(v.s)
		var err error
		f, err = strconv.ParseFloat(s, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
				return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "invalid number")
			}
		}
	default:
		return NullValue, castError(v, Type{Kind: v.kind}, Type{Kind: to}, "unsupported conversion")
	}
	if to == KindFloat {
		return FloatValue(float32(f)), nil
	}
	return DoubleValue(f), nil
}

func castToDecimal(v Value, to Type) (Value, error) {
	switch {
	case v.kind.IsInteger(), v.kind == KindDecimal:
		r, _ := FitDecimal(v, to.Precision, to.Scale)
		return r, nil
	case v.kind == KindBoolean:
		r, _ := FitDecimal(Value{kind: KindDecimal, i: v.i}, to.Precision, to.Scale)
		return r, nil
	case v.kind == KindFloat || v.kind == KindDouble:
		r, _ := DecimalFromFloat(v.Float(), to.Precision, to.Scale)
		return r, nil
	case v.kind.IsString():
		d, err := ParseDecimal(trimSpace(v.s))
		if err != nil {
			return NullValue, castError(v, Type{Kind: v.kind}, to, "invalid number")
		}
		r, _ := FitDecimal(d, to.Precision, to.Scale)
		return r, nil
	}
	return NullValue, castError(v, Type{Kind: v.kind}, to, "unsupported conversion")
}

// FitLength applies the length of t, a CHAR(n), VARCHAR(n), BINARY(n) or
// VARBINARY(n), to the string or binary value v, as CAST does: a longer
// value is cut to n, a shorter CHAR value padded with spaces and a shorter
// BINARY value with zero bytes. The result has t's kind; NULL stays NULL.
func FitLength(v Value, t Type) Value {
	if v.kind == KindNull {
		return v
	}
	if t.Kind.IsBinary() {
		return fitBinary(v.s, t)
	}
	return fitString(v.s, t)
}

// Length returns the length of a string value in characters and that of a
// binary value in bytes.
func Length(v Value) int {
	if v.kind.IsBinary() {
		return len(v.s)
	}
	return utf8.RuneCountInString(v.s)
}

// fitString applies the length of CHAR(n) (truncate, pad with spaces) or
// VARCHAR(n) (truncate) to s.
func fitString(s string, to Type) Value {
	n := to.Precision
	if to.Kind == KindVarChar {
		if n > 0 && n < MaxLength && len(s) > n {
			s = truncateRunes(s, n)
		}
		return StringValue(s)
	}
	if n <= 0 {
		return CharValue(s)
	}
	s = truncateRunes(s, n)
	if c := utf8.RuneCountInString(s); c < n {
		s += strings.Repeat(" ", n-c)
	}
	return CharValue(s)
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	i := 0
	for c := 0; i < len(s); c++ {
		if c == n {
			return s[:i]
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s
}

func fitBinary(s string, to Type) Value {
	n := to.Precision
	if to.Kind == KindVarBinary {
		if n > 0 && n < MaxLength && len(s) > n {
			s = s[:n]
		}
		return Value{kind: KindVarBinary, s: s}
	}
	if n > 0 {
		if len(s) > n {
			s = s[:n]
		} else if len(s) < n {
			s += strings.Repeat("\x00", n-len(s))
		}
	}
	return Value{kind: KindBinary, s: s}
}

// numericRank orders the numeric kinds for implicit widening.
func numericRank(k Kind) int {
	switch k {
	case KindTinyInt:
		return 1
	case KindSmallInt:
		return 2
	case KindInt:
		return 3
	case KindBigInt:
		return 4
	case KindDecimal:
		return 5
	case KindFloat:
		return 6
	case KindDouble:
		return 7
	}
	return 0
}

// Assignable reports whether a value of type from may be used where type to
// is expected without an explicit CAST (INSERT INTO a column, a function
// argument), following Flink's implicit casts: NULL to anything, numbers to
// wider numbers (TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT <
// DOUBLE), any length of CHAR/VARCHAR to CHAR/VARCHAR, BINARY/VARBINARY
// likewise, DATE to TIMESTAMP, TIMESTAMP and TIMESTAMP_LTZ to each other at
// any precision, DECIMAL to DECIMAL, and collections element-wise.
// Nullability is not checked here.
func Assignable(from, to Type) bool {
	fk, tk := from.Kind, to.Kind
	switch {
	case fk == KindNull:
		return true
	case fk.IsNumeric() && tk.IsNumeric():
		return numericRank(fk) <= numericRank(tk)
	case fk.IsString() && tk.IsString(), fk.IsBinary() && tk.IsBinary():
		return true
	case fk == KindDate && (tk == KindDate || tk.IsTimestamp()):
		return true
	case fk.IsTimestamp() && tk.IsTimestamp():
		return true
	case fk == KindArray && tk == KindArray, fk == KindMultiset && tk == KindMultiset:
		return from.Elem != nil && to.Elem != nil && Assignable(*from.Elem, *to.Elem)
	case fk == KindMap && tk == KindMap:
		return from.Elem != nil && to.Elem != nil && from.Value != nil && to.Value != nil &&
			Assignable(*from.Elem, *to.Elem) && Assignable(*from.Value, *to.Value)
	case fk == KindRow && tk == KindRow:
		if len(from.Fields) != len(to.Fields) {
			return false
		}
		for i := range from.Fields {
			if !Assignable(from.Fields[i].Type, to.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	return fk == tk
}

// CommonType returns the least restrictive type of a and b, to which both
// convert for CASE, COALESCE, UNION, IN and comparisons:
//
//	INT, BIGINT                  BIGINT
//	INT, DECIMAL(10, 2)          DECIMAL(12, 2) (INT reads as DECIMAL(10, 0))
//	DECIMAL, DOUBLE              DOUBLE
//	VARCHAR(3), VARCHAR(5)       VARCHAR(5)
//	CHAR(n), VARCHAR(m)          VARCHAR(max(n, m))
//	CHAR(n), CHAR(n)             CHAR(n)
//	CHAR(n), CHAR(m), n != m     VARCHAR(max(n, m)) (Flink converts "ragged"
//	                             CHAR unions to varying: 'a' beside 'abc' is
//	                             not padded)
//	BINARY(n), BINARY(m)         likewise
//	NULL, T                      T, nullable
//	TIMESTAMP(0), TIMESTAMP(3)   TIMESTAMP(3)
//	DATE, TIMESTAMP(p)           TIMESTAMP(p)
//
// The result is nullable when either input is; time attributes are dropped.
// ok is false when the types have no common type (e.g. INT and STRING).
func CommonType(a, b Type) (Type, bool) {
	t, ok := commonType(a, b)
	if !ok {
		return Type{}, false
	}
	t.TimeAttr = NoTimeAttr
	t.NotNull = a.NotNull && b.NotNull
	return t, true
}

func commonType(a, b Type) (Type, bool) {
	ak, bk := a.Kind, b.Kind
	switch {
	case ak == KindNull:
		return b, true
	case bk == KindNull:
		return a, true
	case ak.IsNumeric() && bk.IsNumeric():
		return commonNumeric(a, b), true
	case ak.IsString() && bk.IsString():
		n := max(a.Precision, b.Precision)
		if ak == KindChar && bk == KindChar && a.Precision == b.Precision {
			return Char(n), true
		}
		return VarChar(n), true
	case ak.IsBinary() && bk.IsBinary():
		n := max(a.Precision, b.Precision)
		if ak == KindBinary && bk == KindBinary && a.Precision == b.Precision {
			return Type{Kind: KindBinary, Precision: n}, true
		}
		return Type{Kind: KindVarBinary, Precision: n}, true
	case (ak.IsTimestamp() || ak == KindDate) && (bk.IsTimestamp() || bk == KindDate):
		if ak == KindDate && bk == KindDate {
			return Date, true
		}
		p := 0
		k := KindTimestamp
		for _, t := range [2]Type{a, b} {
			if t.Kind.IsTimestamp() {
				p = max(p, t.Precision)
			}
			if t.Kind == KindTimestampLTZ {
				k = KindTimestampLTZ
			}
		}
		return Type{Kind: k, Precision: p}, true
	case ak == KindTime && bk == KindTime:
		return Time(max(a.Precision, b.Precision)), true
	case (ak == KindArray || ak == KindMultiset) && ak == bk:
		if a.Elem == nil || b.Elem == nil {
			return Type{}, false
		}
		e, ok := CommonType(*a.Elem, *b.Elem)
		if !ok {
			return Type{}, false
		}
		return Type{Kind: ak, Elem: &e}, true
	case ak == KindMap && bk == KindMap:
		if a.Elem == nil || b.Elem == nil || a.Value == nil || b.Value == nil {
			return Type{}, false
		}
		k, ok1 := CommonType(*a.Elem, *b.Elem)
		v, ok2 := CommonType(*a.Value, *b.Value)
		if !ok1 || !ok2 {
			return Type{}, false
		}
		return MapOf(k, v), true
	case ak == KindRow && bk == KindRow:
		if len(a.Fields) != len(b.Fields) {
			return Type{}, false
		}
		fields := make([]Field, len(a.Fields))
		for i := range a.Fields {
			t, ok := CommonType(a.Fields[i].Type, b.Fields[i].Type)
			if !ok {
				return Type{}, false
			}
			fields[i] = Field{Name: a.Fields[i].Name, Type: t}
		}
		return RowOf(fields...), true
	case ak == bk && ak != KindMultiset:
		a.NotNull = false
		return a, true
	}
	return Type{}, false
}

func commonNumeric(a, b Type) Type {
	ak, bk := a.Kind, b.Kind
	switch {
	case ak == KindDouble || bk == KindDouble:
		return Double
	case ak == KindFloat || bk == KindFloat:
		if ak == KindDecimal || bk == KindDecimal {
			return Double
		}
		return Float
	case ak == KindDecimal || bk == KindDecimal:
		da, _ := DecimalTypeOf(a)
		db, _ := DecimalTypeOf(b)
		s := max(da.Scale, db.Scale)
		intDigits := max(da.Precision-da.Scale, db.Precision-db.Scale)
		p := min(intDigits+s, MaxDecimalPrecision)
		return Decimal(p, s)
	}
	if numericRank(ak) >= numericRank(bk) {
		return Type{Kind: ak}
	}
	return Type{Kind: bk}
}
