package json

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// Map-null-key modes.
const (
	nullKeyFail = iota
	nullKeyDrop
	nullKeyLiteral
)

// Encoder writes rows as JSON objects the way Flink's json format does.
// It is not safe for concurrent use.
type Encoder struct {
	root         *node
	iso          bool
	plainDecimal bool
	ignoreNull   bool
	nullKeyMode  int
	nullKey      string
}

// Encode implements format.Encoder.
func (e *Encoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if len(r.Vals) != len(e.root.subs) {
		return dst, fmt.Errorf("cannot encode a row of %d values: the schema has %d columns", len(r.Vals), len(e.root.subs))
	}
	return e.object(dst, e.root, r.Vals)
}

func (e *Encoder) object(dst []byte, n *node, vals []types.Value) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	for i, v := range vals {
		if e.ignoreNull && v.IsNull() {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		var sub *node
		if i < len(n.subs) {
			dst = append(dst, n.keys[i]...)
			sub = n.subs[i]
		} else {
			dst = append(appendString(dst, "f"+strconv.Itoa(i)), ':')
		}
		var err error
		if dst, err = e.value(dst, sub, v); err != nil {
			name := "f" + strconv.Itoa(i)
			if i < len(n.names) {
				name = n.names[i]
			}
			return dst, inField(name, err)
		}
	}
	return append(dst, '}'), nil
}

// value appends v. It follows the value's own kind, using n (which may be
// nil) for field names and nested types.
func (e *Encoder) value(dst []byte, n *node, v types.Value) ([]byte, error) {
	switch k := v.Kind(); k {
	case types.KindNull:
		return append(dst, "null"...), nil
	case types.KindBoolean:
		return strconv.AppendBool(dst, v.Bool()), nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindIntervalDayTime, types.KindIntervalYearMonth:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case types.KindFloat, types.KindDouble:
		f, bits := v.Float(), 64
		if k == types.KindFloat {
			bits = 32
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// Jackson writes non-finite numbers as strings by default.
			dst = append(dst, '"')
			dst = types.AppendJavaFloat(dst, f, bits)
			return append(dst, '"'), nil
		}
		return types.AppendJavaFloat(dst, f, bits), nil
	case types.KindDecimal:
		return appendJavaDecimal(dst, v, e.plainDecimal), nil
	case types.KindChar, types.KindVarChar:
		return appendString(dst, v.Str()), nil
	case types.KindBinary, types.KindVarBinary:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		return append(dst, '"'), nil
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		dst = append(dst, '"')
		dst = e.appendTemporal(dst, v)
		return append(dst, '"'), nil
	case types.KindArray:
		var elem *node
		if n != nil {
			elem = n.elem
		}
		dst = append(dst, '[')
		for i, x := range v.Elems() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = e.value(dst, elem, x); err != nil {
				return dst, inField("["+strconv.Itoa(i)+"]", err)
			}
		}
		return append(dst, ']'), nil
	case types.KindMultiset:
		return e.multiset(dst, v.Elems())
	case types.KindMap:
		var val *node
		if n != nil {
			val = n.val
		}
		return e.mapValue(dst, val, v.Map())
	case types.KindRow:
		if n == nil || n.kind != types.KindRow {
			n = &node{}
		}
		return e.object(dst, n, v.Elems())
	}
	return dst, fmt.Errorf("json format cannot encode %s values", v.Kind())
}

func (e *Encoder) mapValue(dst []byte, val *node, m *types.MapValue) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	for i, k := range m.Keys {
		if k.IsNull() {
			switch e.nullKeyMode {
			case nullKeyFail:
				return dst, fmt.Errorf("map has a NULL key (see option 'map-null-key.mode')")
			case nullKeyDrop:
				continue
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = e.appendKey(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = e.value(dst, val, m.Values[i]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// multiset writes a MULTISET as Flink does: an object from each distinct
// element to its count.
func (e *Encoder) multiset(dst []byte, elems []types.Value) ([]byte, error) {
	var distinct []types.Value
	var counts []int64
	for _, x := range elems {
		found := false
		for j, d := range distinct {
			if d.Kind() == x.Kind() && types.Equal(d, x) {
				counts[j]++
				found = true
				break
			}
		}
		if !found {
			distinct = append(distinct, x)
			counts = append(counts, 1)
		}
	}
	m := &types.MapValue{Keys: distinct, Values: make([]types.Value, len(counts))}
	for i, c := range counts {
		m.Values[i] = types.BigIntValue(c)
	}
	return e.mapValue(dst, nil, m)
}

// appendKey writes a map key as a JSON string holding the key's text.
func (e *Encoder) appendKey(dst []byte, k types.Value) []byte {
	switch k.Kind() {
	case types.KindNull:
		return appendString(dst, e.nullKey)
	case types.KindChar, types.KindVarChar:
		return appendString(dst, k.Str())
	}
	var scratch [64]byte
	b, err := e.value(scratch[:0], nil, k)
	if err != nil {
		b = append(scratch[:0], k.Kind().String()...)
	}
	if len(b) > 0 && b[0] == '"' {
		return append(dst, b...) // already a JSON string
	}
	return appendString(dst, string(b)) // a number, boolean or nested JSON

}

// appendTemporal writes a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ as Flink's
// json format does: fraction digits only as many as needed.
func (e *Encoder) appendTemporal(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindDate:
		return types.AppendDate(dst, v.Int())
	case types.KindTime:
		return trimFraction(types.AppendTime(dst, v.Int(), 6))
	}
	if e.iso {
		dst = trimFraction(types.AppendTimestampISO(dst, v.Int(), 6))
	} else {
		dst = trimFraction(types.AppendTimestamp(dst, v.Int(), 6))
	}
	if v.Kind() == types.KindTimestampLTZ {
		dst = append(dst, 'Z')
	}
	return dst
}

// trimFraction drops trailing zeros of a ".ffffff" fraction at the end of
// dst, and the dot if nothing remains.
func trimFraction(dst []byte) []byte {
	n := len(dst)
	if n < 7 || dst[n-7] != '.' {
		return dst
	}
	for n > 0 && dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	return dst[:n]
}

// appendString writes s as a JSON string, escaping as Jackson does: quotes,
// backslashes and control characters; other characters are kept as UTF-8.
// A byte that is not part of valid UTF-8 becomes U+FFFD: Flink hands
// Jackson a Java String, whose UTF-8 decoder has replaced such bytes, and
// the output must stay valid JSON (which is UTF-8).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size > 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&15])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

// appendJavaDecimal writes a DECIMAL as Java's BigDecimal.toString does (as
// Jackson writes it): plain unless the value is so small that its adjusted
// exponent is below -6, then in scientific notation ("1E-7"). With plain
// set it always writes the plain form.
func appendJavaDecimal(dst []byte, v types.Value, plain bool) []byte {
	scale := v.Scale()
	if plain || scale <= 6 {
		return types.AppendDecimal(dst, v)
	}
	var digits string
	if v.IsBigDecimal() {
		digits = v.BigUnscaled().String()
	} else {
		digits = strconv.FormatInt(v.Unscaled(), 10)
	}
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	adjusted := len(digits) - 1 - scale
	if adjusted >= -6 || digits == "0" {
		return types.AppendDecimal(dst, v)
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(adjusted), 10)
}
