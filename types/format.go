package types

import (
	"math"
	"strconv"
	"time"
)

// FormatValue returns the text of v, of type t, as Flink prints it (CAST to
// STRING and the print connector); see AppendValue.
func FormatValue(v Value, t Type) string {
	return string(AppendValue(make([]byte, 0, 16), v, t))
}

// AppendValue appends the text of v, of type t, as Flink prints values:
//
//	NULL                  NULL (also inside ARRAY, MAP and ROW)
//	BOOLEAN               TRUE, FALSE
//	TINYINT..BIGINT       42
//	FLOAT, DOUBLE         as Java's Float/Double.toString: 1.5, 100.0, 1.0E10,
//	                      1.0E-4, NaN, Infinity, -0.0
//	DECIMAL(p, s)         with exactly s fraction digits: 12.30
//	CHAR, VARCHAR         the characters, unquoted
//	BINARY, VARBINARY     x'0a0b' (the print form; CAST to STRING decodes
//	                      UTF-8 instead, see Cast)
//	DATE                  2020-04-15
//	TIME(p)               08:05:00 with exactly p fraction digits
//	TIMESTAMP(p)          2020-04-15 08:05:00.000 with exactly p fraction digits
//	TIMESTAMP_LTZ(p)      the same, in UTC (AppendValueIn takes a zone)
//	INTERVAL DAY TO SECOND +10 00:00:00.000
//	INTERVAL YEAR TO MONTH +1-06
//	ARRAY                 [1, 2]
//	MAP                   {a=1, b=2}
//	MULTISET              {a=2, b=1} (element=count)
//	ROW                   (1, abc)
//
// t supplies precisions and element types; when its kind does not match the
// value's, defaults are used (fraction precision 6 for times).
func AppendValue(dst []byte, v Value, t Type) []byte {
	return AppendValueIn(dst, v, t, nil)
}

// AppendValueIn is AppendValue that prints TIMESTAMP_LTZ values as wall-clock
// times in zone loc (the session time zone); nil means UTC.
func AppendValueIn(dst []byte, v Value, t Type, loc *time.Location) []byte {
	prec := 6
	if t.Kind == v.kind {
		prec = t.Precision
	}
	switch v.kind {
	case KindNull:
		return append(dst, "NULL"...)
	case KindBoolean:
		if v.i != 0 {
			return append(dst, "TRUE"...)
		}
		return append(dst, "FALSE"...)
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
		return strconv.AppendInt(dst, v.i, 10)
	case KindFloat:
		return AppendJavaFloat(dst, v.Float(), 32)
	case KindDouble:
		return AppendJavaFloat(dst, v.Float(), 64)
	case KindDecimal:
		return AppendDecimal(dst, v)
	case KindChar, KindVarChar:
		return append(dst, v.s...)
	case KindBinary, KindVarBinary:
		dst = append(dst, 'x', '\'')
		for i := 0; i < len(v.s); i++ {
			dst = append(dst, hexDigits[v.s[i]>>4], hexDigits[v.s[i]&15])
		}
		return append(dst, '\'')
	case KindDate:
		return AppendDate(dst, v.i)
	case KindTime:
		if t.Kind != KindTime {
			prec = 0
		}
		return AppendTime(dst, v.i, prec)
	case KindTimestamp:
		return AppendTimestamp(dst, v.i, prec)
	case KindTimestampLTZ:
		return AppendTimestamp(dst, InstantToLocal(v.i, loc), prec)
	case KindIntervalDayTime:
		return AppendIntervalDayTime(dst, v.i)
	case KindIntervalYearMonth:
		return AppendIntervalYearMonth(dst, v.i)
	case KindArray:
		elem := Type{}
		if t.Kind == KindArray && t.Elem != nil {
			elem = *t.Elem
		}
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendValueIn(dst, e, elem, loc)
		}
		return append(dst, ']')
	case KindMultiset:
		elem := Type{}
		if t.Kind == KindMultiset && t.Elem != nil {
			elem = *t.Elem
		}
		return appendMultiset(dst, v.Elems(), elem, loc)
	case KindMap:
		kt, vt := Type{}, Type{}
		if t.Kind == KindMap && t.Elem != nil && t.Value != nil {
			kt, vt = *t.Elem, *t.Value
		}
		m := v.Map()
		dst = append(dst, '{')
		if m != nil {
			for i := range m.Keys {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				dst = AppendValueIn(dst, m.Keys[i], kt, loc)
				dst = append(dst, '=')
				dst = AppendValueIn(dst, m.Values[i], vt, loc)
			}
		}
		return append(dst, '}')
	case KindRow:
		dst = append(dst, '(')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			ft := Type{}
			if t.Kind == KindRow && i < len(t.Fields) {
				ft = t.Fields[i].Type
			}
			dst = AppendValueIn(dst, e, ft, loc)
		}
		return append(dst, ')')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

func appendMultiset(dst []byte, elems []Value, elem Type, loc *time.Location) []byte {
	// Count equal elements, in order of first appearance.
	var distinct []Value
	var counts []int
outer:
	for _, e := range elems {
		for i, d := range distinct {
			if (d.IsNull() && e.IsNull()) || (!d.IsNull() && !e.IsNull() && Equal(d, e)) {
				counts[i]++
				continue outer
			}
		}
		distinct = append(distinct, e)
		counts = append(counts, 1)
	}
	dst = append(dst, '{')
	for i, d := range distinct {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendValueIn(dst, d, elem, loc)
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, int64(counts[i]), 10)
	}
	return append(dst, '}')
}

// AppendIntervalDayTime appends an INTERVAL DAY TO SECOND value
// (microseconds) as Flink prints it: "+10 00:00:00.000", "-0 01:30:00.500".
func AppendIntervalDayTime(dst []byte, micros int64) []byte {
	if micros < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	u := uabs(micros)
	ms := u / 1000
	days := ms / uint64(MicrosPerDay/1000)
	dst = strconv.AppendUint(dst, days, 10)
	dst = append(dst, ' ')
	rest := ms % uint64(MicrosPerDay/1000)
	dst = append2(dst, int(rest/3600000))
	dst = append(dst, ':')
	dst = append2(dst, int(rest/60000%60))
	dst = append(dst, ':')
	dst = append2(dst, int(rest/1000%60))
	dst = append(dst, '.')
	r := rest % 1000
	return append(dst, byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
}

// AppendIntervalYearMonth appends an INTERVAL YEAR TO MONTH value (months)
// as Flink prints it: "+1-06", "-0-03".
func AppendIntervalYearMonth(dst []byte, months int64) []byte {
	if months < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	u := uabs(months)
	dst = strconv.AppendUint(dst, u/12, 10)
	dst = append(dst, '-')
	return append2(dst, int(u%12))
}

// AppendJavaFloat appends f as Java's Double.toString (bitSize 64) or
// Float.toString (bitSize 32) formats it: the shortest digits that read back
// as f, in plain notation with at least one fraction digit when
// 1e-3 <= |f| < 1e7 ("1.5", "100.0", "0.001"), otherwise in computerized
// scientific notation ("1.0E10", "1.234E-5"); "NaN", "Infinity",
// "-Infinity", "0.0" and "-0.0" as Java prints them.
func AppendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	// e is [-]d[.ddd]e±XX: split into digits and exponent.
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digs [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digs[nd] = e[i]
			nd++
		}
	}
	exp, eneg := 0, false
	for _, c := range e[i+1:] {
		switch {
		case c == '-':
			eneg = true
		case c >= '0' && c <= '9':
			exp = exp*10 + int(c-'0')
		}
	}
	if eneg {
		exp = -exp
	}
	d := digs[:nd]
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			// Integer part: first exp+1 digits, padded with zeros.
			for k := 0; k <= exp; k++ {
				if k < nd {
					dst = append(dst, d[k])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if exp+1 < nd {
				return append(dst, d[exp+1:]...)
			}
			return append(dst, '0')
		}
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	dst = append(dst, d[0], '.')
	if nd > 1 {
		dst = append(dst, d[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}
