package csv

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/sluicesql/sluice/types"
)

// Encoder writes rows as csv records. It is not safe for concurrent use.
type Encoder struct {
	o       Options
	types   []types.Type
	scratch []byte
}

// NewEncoder returns an encoder for rows of schema.
func NewEncoder(schema types.Schema, o Options) (*Encoder, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	return &Encoder{o: o, types: schema.Types()}, nil
}

// Encode implements format.Encoder.
func (e *Encoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if len(r.Vals) != len(e.types) {
		return dst, fmt.Errorf("cannot encode a row of %d values: the schema has %d columns", len(r.Vals), len(e.types))
	}
	for i, v := range r.Vals {
		if i > 0 {
			dst = append(dst, e.o.Delimiter)
		}
		if v.IsNull() {
			if e.o.HasNull {
				dst = append(dst, e.o.NullLiteral...)
			}
			continue
		}
		e.scratch = e.text(e.scratch[:0], v)
		dst = e.field(dst, e.scratch, i == 0)
	}
	return dst, nil
}

// field appends a field's text, quoting or escaping it when it holds
// characters that would otherwise end it, or could be read as NULL or a
// comment.
func (e *Encoder) field(dst, text []byte, first bool) []byte {
	o := &e.o
	need := o.HasNull && string(text) == o.NullLiteral || first && o.AllowComments && len(text) > 0 && text[0] == '#' ||
		first && len(text) == 0 && len(e.types) == 1 // not an empty line, which readers skip
	for _, c := range text {
		if c == o.Delimiter || c == '\n' || c == '\r' || o.Quoting && c == o.Quote || o.Escaping && c == o.Escape {
			need = true
			break
		}
	}
	if !need {
		return append(dst, text...)
	}
	if !o.Quoting {
		if !o.Escaping {
			return append(dst, text...) // nothing better to do; documented
		}
		for _, c := range text {
			if c == o.Delimiter || c == o.Escape {
				dst = append(dst, o.Escape)
			}
			dst = append(dst, c)
		}
		return dst
	}
	dst = append(dst, o.Quote)
	for _, c := range text {
		if c == o.Quote {
			dst = append(dst, o.Quote)
		} else if o.Escaping && c == o.Escape {
			dst = append(dst, o.Escape)
		}
		dst = append(dst, c)
	}
	return append(dst, o.Quote)
}

// text appends the text of a non-NULL value.
func (e *Encoder) text(dst []byte, v types.Value) []byte {
	switch k := v.Kind(); k {
	case types.KindBoolean:
		return strconv.AppendBool(dst, v.Bool())
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindIntervalDayTime, types.KindIntervalYearMonth:
		return strconv.AppendInt(dst, v.Int(), 10)
	case types.KindFloat:
		return types.AppendJavaFloat(dst, v.Float(), 32)
	case types.KindDouble:
		return types.AppendJavaFloat(dst, v.Float(), 64)
	case types.KindDecimal:
		return appendDecimal(dst, v, e.o.Scientific)
	case types.KindChar, types.KindVarChar:
		// Invalid UTF-8 becomes U+FFFD, as in Flink (see
		// types.AppendValidUTF8).
		return types.AppendValidUTF8(dst, v.Str())
	case types.KindBinary, types.KindVarBinary:
		return base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
	case types.KindDate:
		return types.AppendDate(dst, v.Int())
	case types.KindTime:
		return trimFraction(types.AppendTime(dst, v.Int(), 6))
	case types.KindTimestamp:
		return trimFraction(types.AppendTimestamp(dst, v.Int(), 6))
	case types.KindTimestampLTZ:
		return append(trimFraction(types.AppendTimestamp(dst, v.Int(), 6)), 'Z')
	case types.KindArray, types.KindRow:
		for i, x := range v.Elems() {
			if i > 0 {
				dst = append(dst, e.o.ArrayDelim...)
			}
			if x.IsNull() {
				if e.o.HasNull {
					dst = append(dst, e.o.NullLiteral...)
				}
				continue
			}
			dst = e.text(dst, x)
		}
		return dst
	}
	return append(dst, v.Kind().String()...)
}

// trimFraction drops trailing zeros of a ".ffffff" fraction at the end of
// dst, and the dot if nothing remains, as Flink's formats print times.
func trimFraction(dst []byte) []byte {
	n := len(dst)
	if n < 7 || dst[n-7] != '.' {
		return dst
	}
	for dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	return dst[:n]
}

// appendDecimal writes a DECIMAL plainly, or, with scientific set, as
// Java's BigDecimal.toString does (Flink's default): plain unless the
// adjusted exponent is below -6, then "1.23E-7".
func appendDecimal(dst []byte, v types.Value, scientific bool) []byte {
	scale := v.Scale()
	if !scientific || scale <= 6 {
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
