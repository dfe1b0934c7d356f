package json

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// maxShared is the largest record whose strings share one copy of the
// record. Strings of a larger record are copied one by one, so that a small
// string kept in state does not pin a large record in memory.
const maxShared = 4096

// maxMultiset bounds the elements a MULTISET object may expand to.
const maxMultiset = 1 << 20

// Decoder decodes JSON objects into rows of a schema. It is not safe for
// concurrent use.
type Decoder struct {
	root        *node
	s           scanner
	rec         string // the record as a string, made on first use
	recOK       bool
	shared      bool
	buf         []byte // scratch for unescaped text
	nameBuf     []byte // scratch for unescaped field names
	iso         bool
	failMissing bool
}

// Decode implements format.Decoder. data must hold one JSON object.
func (d *Decoder) Decode(data []byte, dst []types.Value) error {
	if len(dst) != len(d.root.subs) {
		return fmt.Errorf("cannot decode into a row of %d values: the schema has %d columns", len(dst), len(d.root.subs))
	}
	d.s = scanner{data: data}
	d.recOK, d.rec = false, ""
	d.shared = len(data) <= maxShared
	err := d.decode(dst)
	d.s.data, d.rec = nil, "" // do not pin the caller's buffer or the record
	return err
}

func (d *Decoder) decode(dst []types.Value) error {
	if d.s.peek() != '{' {
		return d.s.syntaxError("a JSON object")
	}
	if err := d.object(d.root, dst, 0); err != nil {
		return err
	}
	if d.s.ws(); d.s.pos != len(d.s.data) {
		return d.s.syntaxError("the end of the record")
	}
	return nil
}

// fieldError names the field (a path such as "a.b[2]") that failed.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return "field \"" + e.path + "\": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// inField prefixes err's path with seg, a field name or "[i]".
func inField(seg string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		if fe.path[0] == '[' {
			fe.path = seg + fe.path
		} else {
			fe.path = seg + "." + fe.path
		}
		return fe
	}
	if err == errDepth {
		return err
	}
	return &fieldError{path: seg, err: err}
}

// record returns the record as a string, copying it on first use.
func (d *Decoder) record() string {
	if !d.recOK {
		d.rec, d.recOK = string(d.s.data), true
	}
	return d.rec
}

// text returns the contents of a string or the text of a token, not
// aliasing the input.
func (d *Decoder) text(start, end int, esc bool) (string, error) {
	if esc {
		var err error
		d.buf, err = unescape(d.buf[:0], d.s.data[start:end])
		if err != nil {
			return "", err
		}
		return string(d.buf), nil
	}
	if d.shared {
		return d.record()[start:end], nil
	}
	return string(d.s.data[start:end]), nil
}

// object decodes the object at the cursor into dst, one value per field of
// ROW node n.
func (d *Decoder) object(n *node, dst []types.Value, depth int) error {
	if depth >= maxDepth {
		return errDepth
	}
	s := &d.s
	s.pos++ // '{'
	var seen uint64
	var seenBig []bool
	if d.failMissing && len(n.subs) > 64 {
		seenBig = make([]bool, len(n.subs))
	}
	if s.peek() == '}' {
		s.pos++
		return d.checkMissing(n, seen, seenBig)
	}
	hint := 0
	for {
		if s.peek() != '"' {
			return s.syntaxError("a field name")
		}
		start, end, esc, err := s.str()
		if err != nil {
			return err
		}
		name := s.data[start:end]
		if esc {
			if d.nameBuf, err = unescape(d.nameBuf[:0], name); err != nil {
				return err
			}
			name = d.nameBuf
		}
		i := n.lookup(name, hint)
		if err := s.expect(':', "':'"); err != nil {
			return err
		}
		if i < 0 {
			if err := s.skip(depth + 1); err != nil {
				return inField(string(name), err)
			}
		} else {
			v, err := d.value(n.subs[i], depth+1)
			if err != nil {
				return inField(n.names[i], err)
			}
			dst[i] = v
			hint = i + 1
			if seenBig != nil {
				seenBig[i] = true
			} else if i < 64 {
				seen |= 1 << i
			}
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return d.checkMissing(n, seen, seenBig)
		default:
			return s.syntaxError("',' or '}'")
		}
	}
}

func (d *Decoder) checkMissing(n *node, seen uint64, seenBig []bool) error {
	if !d.failMissing {
		return nil
	}
	for i := range n.subs {
		if seenBig != nil && !seenBig[i] || seenBig == nil && seen&(1<<i) == 0 {
			return &fieldError{path: n.names[i], err: errors.New("missing (option 'fail-on-missing-field' is set)")}
		}
	}
	return nil
}

func isStringKind(k types.Kind) bool { return k == types.KindVarChar || k == types.KindChar }

// value decodes the value at the cursor as type n.
func (d *Decoder) value(n *node, depth int) (types.Value, error) {
	s := &d.s
	switch c := s.peek(); c {
	case 'n':
		if s.literal("null") {
			return types.NullValue, nil
		}
	case '"':
		start, end, esc, err := s.str()
		if err != nil {
			return types.NullValue, err
		}
		return d.fromString(n, start, end, esc)
	case 't', 'f':
		lit := "true"
		if c == 'f' {
			lit = "false"
		}
		if s.literal(lit) {
			switch {
			case n.kind == types.KindBoolean:
				return types.BoolValue(c == 't'), nil
			case isStringKind(n.kind):
				return types.StringValue(lit).WithKind(n.kind), nil
			}
			return types.NullValue, fmt.Errorf("cannot read JSON boolean %s as %s", lit, n.t)
		}
	case '{':
		switch {
		case n.kind == types.KindRow:
			fields := make([]types.Value, len(n.subs))
			if err := d.object(n, fields, depth); err != nil {
				return types.NullValue, err
			}
			return types.RowValue(fields), nil
		case n.kind == types.KindMap || n.kind == types.KindMultiset:
			return d.mapObject(n, depth)
		case isStringKind(n.kind):
			return d.raw(n, depth)
		}
		return types.NullValue, fmt.Errorf("cannot read a JSON object as %s", n.t)
	case '[':
		switch {
		case n.kind == types.KindArray || n.kind == types.KindMultiset:
			return d.array(n, depth)
		case isStringKind(n.kind):
			return d.raw(n, depth)
		}
		return types.NullValue, fmt.Errorf("cannot read a JSON array as %s", n.t)
	default:
		start := s.pos
		end, frac, ok := s.number()
		if !ok {
			break
		}
		s.pos = end
		return d.fromNumber(n, start, end, frac)
	}
	if c := s.peek(); c == '-' || c >= '0' && c <= '9' {
		return types.NullValue, fmt.Errorf("invalid number %q", s.token())
	}
	return types.NullValue, s.syntaxError("a value")
}

// raw returns the text of the nested value at the cursor, for a STRING
// column.
func (d *Decoder) raw(n *node, depth int) (types.Value, error) {
	start := d.s.pos
	if err := d.s.skip(depth); err != nil {
		return types.NullValue, err
	}
	t, _ := d.text(start, d.s.pos, false)
	return types.StringValue(t).WithKind(n.kind), nil
}

func (d *Decoder) array(n *node, depth int) (types.Value, error) {
	if depth >= maxDepth {
		return types.NullValue, errDepth
	}
	s := &d.s
	s.pos++ // '['
	var elems []types.Value
	if s.peek() == ']' {
		s.pos++
	} else {
		elems = make([]types.Value, 0, 4)
		for {
			v, err := d.value(n.elem, depth+1)
			if err != nil {
				return types.NullValue, inField("["+strconv.Itoa(len(elems))+"]", err)
			}
			elems = append(elems, v)
			if c := s.peek(); c == ',' {
				s.pos++
				continue
			} else if c == ']' {
				s.pos++
				break
			}
			return types.NullValue, s.syntaxError("',' or ']'")
		}
	}
	if elems == nil {
		elems = []types.Value{}
	}
	if n.kind == types.KindMultiset {
		return types.MultisetValue(elems), nil
	}
	return types.ArrayValue(elems), nil
}

// mapObject decodes an object as a MAP (keys parsed from the field names)
// or a MULTISET (element -> count), as Flink writes them.
func (d *Decoder) mapObject(n *node, depth int) (types.Value, error) {
	if depth >= maxDepth {
		return types.NullValue, errDepth
	}
	s := &d.s
	s.pos++ // '{'
	m := &types.MapValue{}
	var multi []types.Value
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return types.NullValue, s.syntaxError("a field name")
			}
			start, end, esc, err := s.str()
			if err != nil {
				return types.NullValue, err
			}
			kt, err := d.text(start, end, esc)
			if err != nil {
				return types.NullValue, err
			}
			k, err := parseText(n.elem, kt, d.iso)
			if err != nil {
				return types.NullValue, inField(kt, fmt.Errorf("map key: %w", err))
			}
			if err := s.expect(':', "':'"); err != nil {
				return types.NullValue, err
			}
			if n.kind == types.KindMultiset {
				start := s.pos
				cnt, err := d.value(&node{t: types.BigInt, kind: types.KindBigInt}, depth+1)
				if err == nil && !cnt.IsNull() && (cnt.Int() < 0 || int64(len(multi))+cnt.Int() > maxMultiset) {
					s.pos = start
					err = fmt.Errorf("invalid multiset count %s", s.token())
				}
				if err != nil {
					return types.NullValue, inField(kt, err)
				}
				for range cnt.Int() {
					multi = append(multi, k)
				}
			} else {
				v, err := d.value(n.val, depth+1)
				if err != nil {
					return types.NullValue, inField(kt, err)
				}
				putMap(m, k, v)
			}
			if c := s.peek(); c == ',' {
				s.pos++
				continue
			} else if c == '}' {
				s.pos++
				break
			}
			return types.NullValue, s.syntaxError("',' or '}'")
		}
	}
	if n.kind == types.KindMultiset {
		if multi == nil {
			multi = []types.Value{}
		}
		return types.MultisetValue(multi), nil
	}
	if m.Keys == nil {
		m.Keys, m.Values = []types.Value{}, []types.Value{}
	}
	return types.NewMapValue(m), nil
}

// putMap sets m[k] = v, replacing the value of an equal key (the last of
// duplicate JSON keys wins).
func putMap(m *types.MapValue, k, v types.Value) {
	for i := range m.Keys {
		if types.Equal(m.Keys[i], k) && m.Keys[i].Kind() == k.Kind() {
			m.Values[i] = v
			return
		}
	}
	m.Keys = append(m.Keys, k)
	m.Values = append(m.Values, v)
}

// fromString converts a JSON string to type n.
func (d *Decoder) fromString(n *node, start, end int, esc bool) (types.Value, error) {
	switch {
	case isStringKind(n.kind):
		t, err := d.text(start, end, esc)
		if err != nil {
			return types.NullValue, err
		}
		return types.StringValue(t).WithKind(n.kind), nil
	case n.kind == types.KindBinary || n.kind == types.KindVarBinary:
		src := d.s.data[start:end]
		if esc {
			var err error
			if d.buf, err = unescape(d.buf[:0], src); err != nil {
				return types.NullValue, err
			}
			src = d.buf
		}
		out := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
		m, err := base64.StdEncoding.Decode(out, src)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid base64 for %s: %w", n.t, err)
		}
		return types.BytesValue(out[:m]).WithKind(n.kind), nil
	}
	t, err := d.text(start, end, esc)
	if err != nil {
		return types.NullValue, err
	}
	return parseText(n, t, d.iso)
}

// fromNumber converts a JSON number (data[start:end]) to type n.
func (d *Decoder) fromNumber(n *node, start, end int, frac bool) (types.Value, error) {
	lit := d.s.data[start:end]
	switch k := n.kind; {
	case k.IsInteger() || k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth:
		if frac {
			return types.NullValue, fmt.Errorf("cannot read %s as %s", lit, n.t)
		}
		v, ok := parseInt(lit)
		if !ok || !inRange(k, v) {
			return types.NullValue, fmt.Errorf("value %s out of range for %s", lit, n.t)
		}
		return types.IntValue(k, v), nil
	case k == types.KindDouble:
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil && !isRange(err) {
			return types.NullValue, fmt.Errorf("invalid number %q", lit)
		}
		return types.DoubleValue(f), nil
	case k == types.KindFloat:
		f, err := strconv.ParseFloat(string(lit), 32)
		if err != nil && !isRange(err) {
			return types.NullValue, fmt.Errorf("invalid number %q", lit)
		}
		return types.FloatValue(float32(f)), nil
	case k == types.KindDecimal:
		if v, ok := fastDecimal(lit, n.t.Precision, n.t.Scale); ok {
			return v, nil
		}
		t, _ := d.text(start, end, false)
		return parseDecimal(n, t)
	case isStringKind(k):
		t, _ := d.text(start, end, false)
		return types.StringValue(t).WithKind(k), nil
	}
	return types.NullValue, fmt.Errorf("cannot read JSON number %s as %s", lit, n.t)
}

func isRange(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

// parseInt parses an optionally negative run of decimal digits.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' || u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

func inRange(k types.Kind, v int64) bool {
	switch k {
	case types.KindTinyInt:
		return v >= math.MinInt8 && v <= math.MaxInt8
	case types.KindSmallInt:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case types.KindInt:
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return true
}

// parseDecimal parses DECIMAL text exactly and fits it to the column's
// precision and scale (HALF_UP); a value too large for the column is
// NULL, as in Flink.
func parseDecimal(n *node, t string) (types.Value, error) {
	v, err := types.ParseDecimal(t)
	if err != nil {
		return types.NullValue, fmt.Errorf("invalid number %q for %s", t, n.t)
	}
	v, _ = types.FitDecimal(v, n.t.Precision, n.t.Scale)
	return v, nil
}

// parseText converts the text of a JSON string (or of a map key) to a
// scalar of type n.
func parseText(n *node, t string, iso bool) (types.Value, error) {
	switch k := n.kind; {
	case isStringKind(k):
		return types.StringValue(t).WithKind(k), nil
	case k == types.KindBinary || k == types.KindVarBinary:
		b, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid base64 for %s: %w", n.t, err)
		}
		return types.BytesValue(b).WithKind(k), nil
	case k == types.KindBoolean:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true":
			return types.BoolValue(true), nil
		case "false":
			return types.BoolValue(false), nil
		}
	case k.IsInteger() || k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth:
		v, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err == nil && inRange(k, v) {
			return types.IntValue(k, v), nil
		}
	case k == types.KindDouble || k == types.KindFloat:
		bits := 64
		if k == types.KindFloat {
			bits = 32
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(t), bits)
		if err == nil || isRange(err) {
			if k == types.KindFloat {
				return types.FloatValue(float32(f)), nil
			}
			return types.DoubleValue(f), nil
		}
	case k == types.KindDecimal:
		return parseDecimal(n, strings.TrimSpace(t))
	case k == types.KindDate:
		days, err := types.ParseDate(t)
		if err != nil {
			return types.NullValue, err
		}
		return types.DateValue(days), nil
	case k == types.KindTime:
		us, err := types.ParseTime(t)
		if err != nil {
			return types.NullValue, err
		}
		return types.TimeValue(types.TruncatePrecision(us, n.t.Precision)), nil
	case k.IsTimestamp():
		return parseTimestamp(n, t, iso)
	default:
		return types.NullValue, fmt.Errorf("cannot read a JSON string as %s", n.t)
	}
	return types.NullValue, fmt.Errorf("cannot parse %q as %s", t, n.t)
}

// parseTimestamp parses a TIMESTAMP or TIMESTAMP_LTZ in the configured
// standard: "yyyy-MM-dd HH:mm:ss[.f...]" (SQL) or "yyyy-MM-ddTHH:mm:ss[.f...]"
// (ISO-8601); TIMESTAMP_LTZ values may end with "Z" or an offset.
func parseTimestamp(n *node, t string, iso bool) (types.Value, error) {
	sepc := byte(' ')
	if iso {
		sepc = 'T'
	}
	if us, ok := fastTimestamp(t, sepc); ok {
		us = types.TruncatePrecision(us, n.t.Precision)
		if n.kind == types.KindTimestampLTZ {
			return types.TimestampLTZValue(us), nil
		}
		return types.TimestampValue(us), nil
	}
	// The date part has 8 to 10 characters ("2020-4-5", "2020-04-15").
	sep := -1
	for i := 8; i <= 10 && i < len(t); i++ {
		if c := t[i]; c == ' ' || c == 'T' || c == 't' {
			sep = i
			break
		}
	}
	if sep >= 0 {
		want, std := byte(' '), "SQL"
		if iso {
			want, std = 'T', "ISO-8601"
		}
		if c := t[sep] &^ 0x20; c != want&^0x20 {
			return types.NullValue, fmt.Errorf("cannot parse %q as %s: expected the %s format (option 'timestamp-format.standard')", t, n.t, std)
		}
	}
	us, err := types.ParseTimestamp(t)
	if err != nil {
		return types.NullValue, fmt.Errorf("cannot parse %q as %s", t, n.t)
	}
	if n.kind == types.KindTimestamp && sep >= 0 && strings.ContainsAny(t[sep+1:], "Zz+-") {
		return types.NullValue, fmt.Errorf("cannot parse %q as %s: a TIMESTAMP has no time zone (use TIMESTAMP_LTZ)", t, n.t)
	}
	us = types.TruncatePrecision(us, n.t.Precision)
	if n.kind == types.KindTimestampLTZ {
		return types.TimestampLTZValue(us), nil
	}
	return types.TimestampValue(us), nil
}

// fastTimestamp parses the common layout "yyyy-MM-dd?HH:mm:ss[.f{1,9}]"
// (? being sep) without a zone; ok is false for anything else, which the
// general parser then handles.
func fastTimestamp(t string, sep byte) (int64, bool) {
	if len(t) < 19 || t[4] != '-' || t[7] != '-' || t[10] != sep || t[13] != ':' || t[16] != ':' {
		return 0, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(t[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > types.DaysInMonth(y, mo) ||
		h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	var frac int64
	if len(t) > 19 {
		if t[19] != '.' || len(t) == 20 || len(t) > 29 {
			return 0, false
		}
		digits := 0
		for _, c := range []byte(t[20:]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			if digits < 6 {
				frac = frac*10 + int64(c-'0')
			}
			digits++
		}
		for ; digits < 6; digits++ {
			frac *= 10
		}
	}
	days := types.DateFromCivil(y, mo, d)
	return days*types.MicrosPerDay + int64(h)*types.MicrosPerHour + int64(mi)*types.MicrosPerMinute +
		int64(sec)*types.MicrosPerSecond + frac, true
}

// fastDecimal parses a plain JSON number of at most 18 digits with no more
// fraction digits than scale straight into DECIMAL(p, scale); ok is false
// for anything else, which the exact general path then handles.
func fastDecimal(lit []byte, p, scale int) (types.Value, bool) {
	i, neg := 0, false
	if len(lit) > 0 && lit[0] == '-' {
		neg, i = true, 1
	}
	var u int64
	digits, frac, dot := 0, 0, false
	for ; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c >= '0' && c <= '9':
			u = u*10 + int64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return types.NullValue, false
		}
	}
	if digits > 18 || frac > scale || scale > 18 || p > 18 {
		return types.NullValue, false
	}
	for ; frac < scale; frac++ {
		if u > math.MaxInt64/10 {
			return types.NullValue, false
		}
		u *= 10
	}
	lim := int64(1)
	for range p {
		lim *= 10
	}
	if u >= lim {
		return types.NullValue, true // too large for the column: NULL, as Flink
	}
	if neg {
		u = -u
	}
	return types.DecimalValue(u, scale), true
}
