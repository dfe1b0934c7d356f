package csv

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Decoder decodes csv records into rows of a schema. It is not safe for
// concurrent use.
type Decoder struct {
	o     Options
	names []string
	types []types.Type

	data  []byte
	rec   string // the record as a string, made on first use
	recOK bool
	buf   []byte     // scratch for fields with escapes or doubled quotes
	join  recordScan // the scan of Incomplete and Continues
	skip  []bool     // columns not parsed (Prune); nil: none
}

// NewDecoder returns a decoder for rows of schema.
func NewDecoder(schema types.Schema, o Options) (*Decoder, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	return &Decoder{o: o, names: schema.Names(), types: schema.Types()}, nil
}

// SkipRecord reports whether data holds no record: an empty line, or a
// comment line when 'allow-comments' is set. Line-oriented readers call it
// before Decode.
func (d *Decoder) SkipRecord(data []byte) bool {
	data = trimEOL(format.TrimBOM(data))
	return len(data) == 0 || d.o.AllowComments && data[0] == '#'
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// field is one field of a record, before conversion.
type field struct {
	start, end int  // bounds in the record, when !copied
	copied     bool // the text is in d.buf[start:end] (escapes removed)
	quoted     bool
	raw        []byte // the field as written (for the null literal)
}

// Decode implements format.Decoder. A trailing line break is ignored, and
// so is a leading UTF-8 byte order mark (the first line of a file saved by
// some spreadsheets), as Flink's reader (Jackson) skips it.
func (d *Decoder) Decode(data []byte, dst []types.Value) error {
	if len(dst) != len(d.types) {
		return fmt.Errorf("cannot decode into a row of %d values: the schema has %d columns", len(dst), len(d.types))
	}
	d.data, d.recOK, d.rec = trimEOL(format.TrimBOM(data)), false, ""
	err := d.decode(dst)
	d.data, d.rec = nil, ""
	return err
}

// Prune implements format.Pruner: the fields of columns not read are
// split off but not parsed, and stay NULL.
func (d *Decoder) Prune(read []bool) {
	if len(read) != len(d.types) || !slices.Contains(read, false) {
		d.skip = nil
		return
	}
	d.skip = make([]bool, len(read))
	for i, r := range read {
		d.skip[i] = !r
	}
}

func (d *Decoder) decode(dst []types.Value) error {
	if d.o.AllowComments && len(d.data) > 0 && d.data[0] == '#' {
		return errors.New("the record is a comment line")
	}
	i, col := 0, 0
	for {
		f, next, err := d.next(i)
		if err != nil {
			return err
		}
		if col < len(dst) && (d.skip == nil || !d.skip[col]) {
			f.raw = d.data[i:next]
			if err := d.column(col, f, dst); err != nil {
				return fmt.Errorf("field %q: %w", d.names[col], err)
			}
		}
		col++
		if next >= len(d.data) {
			break
		}
		i = next + 1 // after the delimiter
	}
	if col < len(dst) {
		return fmt.Errorf("the record has %d fields, expected %d", col, len(dst))
	}
	return nil
}

// next reads the field starting at i. It returns the field and the index of
// the delimiter after it (len(data) at the end).
func (d *Decoder) next(i int) (field, int, error) {
	data, o := d.data, &d.o
	if o.Quoting && i < len(data) && data[i] == o.Quote {
		return d.quoted(i)
	}
	start := i
	for ; i < len(data); i++ {
		c := data[i]
		if c == o.Delimiter {
			return field{start: start, end: i}, i, nil
		}
		if o.Escaping && c == o.Escape {
			return d.escapedUnquoted(start)
		}
	}
	return field{start: start, end: i}, i, nil
}

// escapedUnquoted reads an unquoted field holding escape characters into
// d.buf.
func (d *Decoder) escapedUnquoted(start int) (field, int, error) {
	data, o := d.data, &d.o
	d.buf = d.buf[:0]
	i := start
	for ; i < len(data) && data[i] != o.Delimiter; i++ {
		if data[i] == o.Escape {
			i++
			if i == len(data) {
				return field{}, 0, errors.New("the record ends with an escape character")
			}
		}
		d.buf = append(d.buf, data[i])
	}
	return field{start: 0, end: len(d.buf), copied: true}, i, nil
}

// quoted reads a quoted field whose opening quote is at i.
func (d *Decoder) quoted(i int) (field, int, error) {
	data, o := d.data, &d.o
	i++
	start := i
	copied := false
	for {
		if i >= len(data) {
			return field{}, 0, fmt.Errorf("unterminated quoted field starting at byte %d", start-1)
		}
		c := data[i]
		special := o.Escaping && c == o.Escape && i+1 < len(data) || c == o.Quote && i+1 < len(data) && data[i+1] == o.Quote
		if special {
			if !copied {
				d.buf = append(d.buf[:0], data[start:i]...)
				copied = true
			}
			d.buf = append(d.buf, data[i+1])
			i += 2
			continue
		}
		if c == o.Quote {
			break
		}
		if copied {
			d.buf = append(d.buf, c)
		}
		i++
	}
	f := field{start: start, end: i, quoted: true}
	if copied {
		f = field{start: 0, end: len(d.buf), copied: true, quoted: true}
	}
	i++ // closing quote
	if i < len(data) && data[i] != o.Delimiter {
		return field{}, 0, fmt.Errorf("unexpected %q after the closing quote at byte %d", data[i], i-1)
	}
	return f, i, nil
}

// text returns the field's text as a string that does not alias the input.
func (d *Decoder) text(f field) string {
	if f.copied {
		return string(d.buf[f.start:f.end])
	}
	if !d.recOK {
		d.rec, d.recOK = string(d.data), true
	}
	return d.rec[f.start:f.end]
}

// column converts field f into dst[col].
func (d *Decoder) column(col int, f field, dst []types.Value) error {
	if !f.quoted && d.o.HasNull && string(f.raw) == d.o.NullLiteral {
		return nil // NULL
	}
	v, err := d.parse(d.types[col], d.text(f))
	dst[col] = v
	return err
}

func isStringKind(k types.Kind) bool { return k == types.KindVarChar || k == types.KindChar }

// parse converts the text of a field (or of an ARRAY element or ROW field)
// to type t. s does not alias the input.
func (d *Decoder) parse(t types.Type, s string) (types.Value, error) {
	k := t.Kind
	if isStringKind(k) {
		return types.StringValue(s).WithKind(k), nil
	}
	if s == "" {
		return types.NullValue, nil
	}
	switch {
	case k == types.KindArray || k == types.KindRow:
		parts := strings.Split(s, d.o.ArrayDelim)
		vals := make([]types.Value, len(parts))
		for i, p := range parts {
			et := t.Elem
			if k == types.KindRow {
				if i >= len(t.Fields) {
					vals = vals[:i]
					break
				}
				et = &t.Fields[i].Type
			}
			if d.o.HasNull && p == d.o.NullLiteral {
				continue
			}
			v, err := d.parse(*et, p)
			if err != nil {
				return types.NullValue, fmt.Errorf("element %d: %w", i, err)
			}
			vals[i] = v
		}
		if k == types.KindRow {
			if len(vals) < len(t.Fields) {
				return types.NullValue, fmt.Errorf("%q has %d fields, expected %d for %s", s, len(vals), len(t.Fields), t)
			}
			return types.RowValue(vals), nil
		}
		return types.ArrayValue(vals), nil
	case k == types.KindBinary || k == types.KindVarBinary:
		if s = strings.TrimSpace(s); s == "" {
			return types.NullValue, nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid base64 for %s: %w", t, err)
		}
		return types.BytesValue(b).WithKind(k), nil
	}
	s = strings.TrimSpace(s)
	switch {
	case k == types.KindBoolean:
		switch {
		case strings.EqualFold(s, "true"):
			return types.BoolValue(true), nil
		case strings.EqualFold(s, "false"):
			return types.BoolValue(false), nil
		}
	case k.IsInteger() || k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth:
		lo, hi := types.IntegerRange(k)
		if !k.IsInteger() {
			lo, hi = -1<<63, 1<<63-1
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil && n >= lo && n <= hi {
			return types.IntValue(k, n), nil
		}
		if err == nil || errors.Is(err, strconv.ErrRange) {
			return types.NullValue, fmt.Errorf("value %s out of range for %s", s, t)
		}
	case k == types.KindDouble || k == types.KindFloat:
		bits := 64
		if k == types.KindFloat {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err == nil || errors.Is(err, strconv.ErrRange) {
			if k == types.KindFloat {
				return types.FloatValue(float32(f)), nil
			}
			return types.DoubleValue(f), nil
		}
	case k == types.KindDecimal:
		v, err := types.ParseDecimal(s)
		if err == nil {
			v, _ = types.FitDecimal(v, t.Precision, t.Scale) // too large: NULL, as Flink
			return v, nil
		}
	case k == types.KindDate:
		if days, err := types.ParseDate(s); err == nil {
			return types.DateValue(days), nil
		}
	case k == types.KindTime:
		if us, err := types.ParseTime(s); err == nil {
			return types.TimeValue(types.TruncatePrecision(us, t.Precision)), nil
		}
	case k == types.KindTimestamp:
		if us, err := types.ParseTimestamp(s); err == nil {
			return types.TimestampValue(types.TruncatePrecision(us, t.Precision)), nil
		}
	case k == types.KindTimestampLTZ:
		if us, err := types.ParseTimestamp(s); err == nil {
			return types.TimestampLTZValue(types.TruncatePrecision(us, t.Precision)), nil
		}
	default:
		return types.NullValue, fmt.Errorf("type %s is not supported", t)
	}
	return types.NullValue, fmt.Errorf("cannot parse %q as %s", s, t)
}

// Incomplete reports whether data ends inside a quoted field, so that a
// line-oriented reader should append the next line (with its line break)
// before decoding: quoted fields may hold line breaks. It starts a record:
// Continues goes on from where it leaves off.
func (d *Decoder) Incomplete(data []byte) bool {
	d.join = recordScan{fieldStart: true}
	return d.join.scan(&d.o, data)
}

// Continues reports whether a record that Incomplete (or Continues) found
// incomplete still is once a line break and line are appended to it. It
// looks at line only, so that joining the lines of a record costs their
// length, not the record's length again for every line.
func (d *Decoder) Continues(line []byte) bool {
	d.join.scan(&d.o, []byte{'\n'})
	return d.join.scan(&d.o, line)
}

// recordScan is where a scan for the end of a record stands between
// lines: inside a quoted field or not, at the start of a field or not,
// and whether the next byte is escaped.
type recordScan struct {
	fieldStart, inQuote, escaped bool
}

// scan goes on over data and reports whether it ends inside a quoted
// field. A quote that ends data closes the field: what follows it, if
// anything, is a line break, which is not a quote.
func (s *recordScan) scan(o *Options, data []byte) bool {
	if !o.Quoting {
		return false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if s.escaped {
			s.escaped = false
			continue
		}
		switch {
		case s.inQuote:
			if o.Escaping && c == o.Escape {
				s.escaped = true
			} else if c == o.Quote {
				if i+1 < len(data) && data[i+1] == o.Quote {
					i++
				} else {
					s.inQuote = false
				}
			}
		case s.fieldStart && c == o.Quote:
			s.inQuote = true
			s.fieldStart = false
		case c == o.Delimiter:
			s.fieldStart = true
		default:
			s.fieldStart = false
			if o.Escaping && c == o.Escape {
				s.escaped = true
			}
		}
	}
	return s.inQuote
}
