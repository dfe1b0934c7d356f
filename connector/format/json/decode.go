package json

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// maxMultiset bounds the elements a MULTISET object may expand to.
const maxMultiset = 1 << 20

// Decoder decodes JSON objects into rows of a schema. It is not safe for
// concurrent use.
type Decoder struct {
	root        *node
	s           scanner
	iso         bool
	failMissing bool
	skip        []bool // top-level fields not decoded (Prune); nil: none

	// The contents of the record's strings are gathered in strs and
	// turned into one string when the record is done; pend says which
	// values receive which part. So a record costs one allocation for all
	// its strings, sized to the strings rather than to the record.
	strs []byte
	pend []pending

	buf []byte // scratch for unescaped text that is only parsed
}

// pending is a string value waiting for the record's string.
type pending struct {
	dst        *types.Value
	start, end int
	kind       types.Kind
}

// Decode implements format.Decoder. data must hold one JSON object, which
// a UTF-8 byte order mark may precede (the first line of a file saved by
// some editors), as Flink's reader (Jackson) allows.
func (d *Decoder) Decode(data []byte, dst []types.Value) error {
	if len(dst) != len(d.root.subs) {
		return fmt.Errorf("cannot decode into a row of %d values: the schema has %d columns", len(dst), len(d.root.subs))
	}
	d.s = scanner{data: format.TrimBOM(data)}
	d.strs, d.pend = d.strs[:0], d.pend[:0]
	err := d.decode(dst)
	if err == nil && len(d.pend) > 0 {
		all := string(d.strs)
		for _, p := range d.pend {
			if p.dst != nil {
				*p.dst = types.StringValue(all[p.start:p.end]).WithKind(p.kind)
			}
		}
	}
	clear(d.pend) // do not keep pointers into the caller's rows
	d.s.data = nil
	return err
}

// SkipRecord reports whether data holds no record: white space only. As in
// Flink, whose reader reads such a line as a missing row, it gives no row;
// line-oriented readers call it before Decode.
func (d *Decoder) SkipRecord(data []byte) bool { return format.Blank(data) }

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
		if fe.path != "" && fe.path[0] == '[' {
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

// raw returns the bytes of the string at data[start:end], unescaped into
// scratch if needed. The result is only valid until the next call.
func (d *Decoder) raw(start, end int, esc bool) ([]byte, error) {
	b := d.s.data[start:end]
	if !esc {
		return b, nil
	}
	var err error
	d.buf, err = unescape(d.buf[:0], b)
	return d.buf, err
}

// setString stores the string b into *dst, deferred to the record's string
// when dst is stable (a column or a ROW field) and copied at once
// otherwise.
func (d *Decoder) setString(dst *types.Value, b []byte, esc bool, kind types.Kind, deferOK bool) error {
	if !deferOK {
		if esc {
			var err error
			if b, err = unescape(d.buf[:0], b); err != nil {
				return err
			}
			d.buf = b
		}
		*dst = types.StringValue(string(b)).WithKind(kind)
		return nil
	}
	start := len(d.strs)
	if esc {
		var err error
		if d.strs, err = unescape(d.strs, b); err != nil {
			return err
		}
	} else {
		d.strs = append(d.strs, b...)
	}
	d.pend = append(d.pend, pending{dst: dst, start: start, end: len(d.strs), kind: kind})
	return nil
}

// Prune implements format.Pruner: the top-level fields that are not read
// are skipped (their syntax checked, nothing decoded or allocated), and
// with 'fail-on-missing-field' only the fields read must be present, as
// with Flink's projection push-down.
func (d *Decoder) Prune(read []bool) {
	if len(read) != len(d.root.subs) || !slices.Contains(read, false) {
		d.skip = nil
		return
	}
	d.skip = make([]bool, len(read))
	for i, r := range read {
		d.skip[i] = !r
	}
}

// object decodes the object at the cursor into dst, one value per field of
// ROW node n. dst must not move while the record is decoded.
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
		name, err := d.raw(start, end, esc)
		if err != nil {
			return err
		}
		i := n.lookup(name, hint)
		if err := s.expect(':', "':'"); err != nil {
			return err
		}
		if i < 0 || depth == 0 && d.skip != nil && d.skip[i] {
			if err := s.skip(depth + 1); err != nil {
				return inField(string(name), err)
			}
		} else {
			if i >= 64 || seen&(1<<i) != 0 {
				d.unpend(&dst[i]) // a repeated field: the last one wins
			}
			if err := d.value(n.subs[i], depth+1, &dst[i], true); err != nil {
				return inField(n.names[i], err)
			}
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

// unpend drops a deferred string bound for dst, which is about to be
// overwritten.
func (d *Decoder) unpend(dst *types.Value) {
	for i := range d.pend {
		if d.pend[i].dst == dst {
			d.pend[i].dst = nil
		}
	}
}

func (d *Decoder) checkMissing(n *node, seen uint64, seenBig []bool) error {
	if !d.failMissing {
		return nil
	}
	for i := range n.subs {
		if n == d.root && d.skip != nil && d.skip[i] {
			continue
		}
		if seenBig != nil && !seenBig[i] || seenBig == nil && seen&(1<<i) == 0 {
			return &fieldError{path: n.names[i], err: errors.New("missing (option 'fail-on-missing-field' is set)")}
		}
	}
	return nil
}

func isStringKind(k types.Kind) bool { return k == types.KindVarChar || k == types.KindChar }

// value decodes the value at the cursor as type n into *dst. deferOK says
// whether dst stays put until the record is done (see setString).
func (d *Decoder) value(n *node, depth int, dst *types.Value, deferOK bool) error {
	s := &d.s
	switch c := s.peek(); c {
	case 'n':
		if s.literal("null") {
			*dst = types.NullValue
			return nil
		}
	case '"':
		start, end, esc, err := s.str()
		if err != nil {
			return err
		}
		if isStringKind(n.kind) {
			return d.setString(dst, s.data[start:end], esc, n.kind, deferOK)
		}
		b, err := d.raw(start, end, esc)
		if err != nil {
			return err
		}
		v, err := parseText(n, b, d.iso)
		*dst = v
		return err
	case 't', 'f':
		lit := "true"
		if c == 'f' {
			lit = "false"
		}
		if s.literal(lit) {
			switch {
			case n.kind == types.KindBoolean:
				*dst = types.BoolValue(c == 't')
				return nil
			case isStringKind(n.kind):
				*dst = types.StringValue(lit).WithKind(n.kind)
				return nil
			}
			return fmt.Errorf("cannot read JSON boolean %s as %s", lit, n.t)
		}
	case '{':
		switch {
		case n.kind == types.KindRow:
			fields := make([]types.Value, len(n.subs))
			*dst = types.RowValue(fields) // before decoding: fields may be deferred
			return d.object(n, fields, depth)
		case n.kind == types.KindMap || n.kind == types.KindMultiset:
			return d.mapObject(n, depth, dst)
		case isStringKind(n.kind):
			return d.rawText(n, depth, dst, deferOK)
		}
		return fmt.Errorf("cannot read a JSON object as %s", n.t)
	case '[':
		switch {
		case n.kind == types.KindArray || n.kind == types.KindMultiset:
			return d.array(n, depth, dst)
		case isStringKind(n.kind):
			return d.rawText(n, depth, dst, deferOK)
		}
		return fmt.Errorf("cannot read a JSON array as %s", n.t)
	default:
		start := s.pos
		end, frac, ok := s.number()
		if !ok {
			break
		}
		s.pos = end
		if isStringKind(n.kind) {
			return d.setString(dst, s.data[start:end], false, n.kind, deferOK)
		}
		v, err := fromNumber(n, s.data[start:end], frac)
		*dst = v
		return err
	}
	if c := s.peek(); c == '-' || c >= '0' && c <= '9' {
		return fmt.Errorf("invalid number %q", s.token())
	}
	return s.syntaxError("a value")
}

// rawText stores the text of the nested value at the cursor, for a STRING
// column.
func (d *Decoder) rawText(n *node, depth int, dst *types.Value, deferOK bool) error {
	start := d.s.pos
	if err := d.s.skip(depth); err != nil {
		return err
	}
	return d.setString(dst, d.s.data[start:d.s.pos], false, n.kind, deferOK)
}

func (d *Decoder) array(n *node, depth int, dst *types.Value) error {
	if depth >= maxDepth {
		return errDepth
	}
	s := &d.s
	s.pos++ // '['
	elems := []types.Value{}
	if s.peek() == ']' {
		s.pos++
	} else {
		for {
			// The slice may grow and move: elements are not deferred.
			var v types.Value
			if err := d.value(n.elem, depth+1, &v, false); err != nil {
				return inField("["+strconv.Itoa(len(elems))+"]", err)
			}
			elems = append(elems, v)
			if c := s.peek(); c == ',' {
				s.pos++
				continue
			} else if c == ']' {
				s.pos++
				break
			}
			return s.syntaxError("',' or ']'")
		}
	}
	if n.kind == types.KindMultiset {
		*dst = types.MultisetValue(elems)
	} else {
		*dst = types.ArrayValue(elems)
	}
	return nil
}

// mapObject decodes an object as a MAP (keys parsed from the field names)
// or a MULTISET (element -> count), as Flink writes them.
func (d *Decoder) mapObject(n *node, depth int, dst *types.Value) error {
	if depth >= maxDepth {
		return errDepth
	}
	s := &d.s
	s.pos++ // '{'
	m := &types.MapValue{Keys: []types.Value{}, Values: []types.Value{}}
	multi := []types.Value{}
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			if s.peek() != '"' {
				return s.syntaxError("a field name")
			}
			start, end, esc, err := s.str()
			if err != nil {
				return err
			}
			kb, err := d.raw(start, end, esc)
			if err != nil {
				return err
			}
			keyName := string(kb)
			k, err := parseText(n.elem, kb, d.iso)
			if err != nil {
				return inField(keyName, fmt.Errorf("map key: %w", err))
			}
			if err := s.expect(':', "':'"); err != nil {
				return err
			}
			if n.kind == types.KindMultiset {
				start := s.pos
				end, frac, ok := s.number()
				var cnt int64
				if ok && !frac {
					cnt, ok = parseInt(s.data[start:end])
				}
				if !ok || frac || cnt < 0 || int64(len(multi))+cnt > maxMultiset {
					return inField(keyName, fmt.Errorf("invalid multiset count %q", s.token()))
				}
				s.pos = end
				for range cnt {
					multi = append(multi, k)
				}
			} else {
				var v types.Value
				if err := d.value(n.val, depth+1, &v, false); err != nil {
					return inField(keyName, err)
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
			return s.syntaxError("',' or '}'")
		}
	}
	if n.kind == types.KindMultiset {
		*dst = types.MultisetValue(multi)
	} else {
		*dst = types.NewMapValue(m)
	}
	return nil
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

// fromNumber converts a JSON number literal to type n (not a string type).
func fromNumber(n *node, lit []byte, frac bool) (types.Value, error) {
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
		if f, ok := fastFloat(lit); ok {
			return types.DoubleValue(f), nil
		}
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
		return parseDecimal(n, lit)
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
func parseDecimal(n *node, b []byte) (types.Value, error) {
	if v, ok := fastDecimal(b, n.t.Precision, n.t.Scale); ok {
		return v, nil
	}
	v, err := types.ParseDecimal(string(b))
	if err != nil {
		return types.NullValue, fmt.Errorf("invalid number %q for %s", b, n.t)
	}
	v, _ = types.FitDecimal(v, n.t.Precision, n.t.Scale)
	return v, nil
}

// parseText converts the text of a JSON string (or of a map key) to a
// scalar of type n. b is not retained.
func parseText(n *node, b []byte, iso bool) (types.Value, error) {
	switch k := n.kind; {
	case isStringKind(k):
		return types.StringValue(string(b)).WithKind(k), nil
	case k == types.KindBinary || k == types.KindVarBinary:
		out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
		m, err := base64.StdEncoding.Decode(out, b)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid base64 for %s: %w", n.t, err)
		}
		return types.BytesValue(out[:m]).WithKind(k), nil
	case k == types.KindBoolean:
		t := bytes.TrimSpace(b)
		switch {
		case strings.EqualFold(string(t), "true"):
			return types.BoolValue(true), nil
		case strings.EqualFold(string(t), "false"):
			return types.BoolValue(false), nil
		}
	case k.IsInteger() || k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth:
		t := bytes.TrimSpace(b)
		if len(t) > 1 && t[0] == '+' {
			t = t[1:]
		}
		if v, ok := parseInt(t); ok && inRange(k, v) {
			return types.IntValue(k, v), nil
		}
	case k == types.KindDouble || k == types.KindFloat:
		bits := 64
		if k == types.KindFloat {
			bits = 32
		}
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), bits)
		if err == nil || isRange(err) {
			if k == types.KindFloat {
				return types.FloatValue(float32(f)), nil
			}
			return types.DoubleValue(f), nil
		}
	case k == types.KindDecimal:
		return parseDecimal(n, bytes.TrimSpace(b))
	case k == types.KindDate:
		if days, ok := fastDate(b); ok {
			return types.DateValue(days), nil
		}
		days, err := types.ParseDate(string(b))
		if err != nil {
			return types.NullValue, err
		}
		return types.DateValue(days), nil
	case k == types.KindTime:
		us, err := types.ParseTime(string(b))
		if err != nil {
			return types.NullValue, err
		}
		return types.TimeValue(types.TruncatePrecision(us, n.t.Precision)), nil
	case k.IsTimestamp():
		return parseTimestamp(n, b, iso)
	default:
		return types.NullValue, fmt.Errorf("cannot read a JSON string as %s", n.t)
	}
	return types.NullValue, fmt.Errorf("cannot parse %q as %s", b, n.t)
}

// parseTimestamp parses a TIMESTAMP or TIMESTAMP_LTZ in the configured
// standard: "yyyy-MM-dd HH:mm:ss[.f...]" (SQL) or "yyyy-MM-ddTHH:mm:ss[.f...]"
// (ISO-8601); TIMESTAMP_LTZ values may end with "Z" or an offset.
func parseTimestamp(n *node, b []byte, iso bool) (types.Value, error) {
	want, std := byte(' '), "SQL"
	if iso {
		want, std = 'T', "ISO-8601"
	}
	us, ok := fastTimestamp(b, want)
	if !ok {
		// The date part has 8 to 10 characters ("2020-4-5", "2020-04-15").
		sep := -1
		for i := 8; i <= 10 && i < len(b); i++ {
			if c := b[i]; c == ' ' || c == 'T' || c == 't' {
				sep = i
				break
			}
		}
		if sep >= 0 && b[sep]&^0x20 != want&^0x20 {
			return types.NullValue, fmt.Errorf("cannot parse %q as %s: expected the %s format (option 'timestamp-format.standard')", b, n.t, std)
		}
		var err error
		if us, err = types.ParseTimestamp(string(b)); err != nil {
			return types.NullValue, fmt.Errorf("cannot parse %q as %s", b, n.t)
		}
		if n.kind == types.KindTimestamp && sep >= 0 && bytes.ContainsAny(b[sep+1:], "Zz+-") {
			return types.NullValue, fmt.Errorf("cannot parse %q as %s: a TIMESTAMP has no time zone (use TIMESTAMP_LTZ)", b, n.t)
		}
	}
	us = types.TruncatePrecision(us, n.t.Precision)
	if n.kind == types.KindTimestampLTZ {
		return types.TimestampLTZValue(us), nil
	}
	return types.TimestampValue(us), nil
}

// digits parses b as an unsigned decimal number.
func digits(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, len(b) > 0
}

// fastDate parses exactly "yyyy-MM-dd"; ok is false for anything else.
func fastDate(b []byte) (int64, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(b[0:4])
	m, ok2 := digits(b[5:7])
	d, ok3 := digits(b[8:10])
	if !(ok1 && ok2 && ok3) || m < 1 || m > 12 || d < 1 || d > types.DaysInMonth(y, m) {
		return 0, false
	}
	return types.DateFromCivil(y, m, d), true
}

// fastTimestamp parses the common layout "yyyy-MM-dd?HH:mm:ss[.f{1,9}]"
// (? being sep) without a zone; ok is false for anything else, which the
// general parser then handles.
func fastTimestamp(b []byte, sep byte) (int64, bool) {
	if len(b) < 19 || b[10] != sep || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	days, ok := fastDate(b[:10])
	h, ok1 := digits(b[11:13])
	mi, ok2 := digits(b[14:16])
	sec, ok3 := digits(b[17:19])
	if !(ok && ok1 && ok2 && ok3) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	var frac int64
	if len(b) > 19 {
		if b[19] != '.' || len(b) == 20 || len(b) > 29 {
			return 0, false
		}
		n := 0
		for _, c := range b[20:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			if n < 6 {
				frac = frac*10 + int64(c-'0')
			}
			n++
		}
		for ; n < 6; n++ {
			frac *= 10
		}
	}
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

// float64pow10 holds the powers of ten that float64 represents exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses a plain decimal literal of at most 15 digits without an
// exponent. Such a mantissa and its power of ten are exact in float64, so
// one division is correctly rounded (Clinger's fast path); ok is false for
// anything else, which strconv then handles.
func fastFloat(lit []byte) (float64, bool) {
	i, neg := 0, false
	if len(lit) > 0 && lit[0] == '-' {
		neg, i = true, 1
	}
	var m uint64
	n, frac, dot := 0, 0, false
	for ; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			n++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if n == 0 || n > 15 {
		return 0, false
	}
	f := float64(m) / float64pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}
