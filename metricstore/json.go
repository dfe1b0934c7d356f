package metricstore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// JSON forms of reads and events, as the server's API answers them.
//
// Values are written as the server's previews write them: numbers,
// strings, booleans and null as such (a DECIMAL as a number of its exact
// digits, a FLOAT or DOUBLE that is not finite as a string), BINARY as
// base64, an ARRAY as an array, and the other kinds (times, intervals,
// maps, rows) as their printed text. Event times are UTC instants in
// ISO-8601 with milliseconds ("2026-12-02T10:00:00.000Z"), null when
// NOT_FOUND.

// AppendJSON appends the result as a JSON object:
//
//	{"metadata": {"group", "version", "keys": [names], "metrics": [names], "token"},
//	 "results": [{"key": [...], "values": [...], "statuses": [...], "event_timestamps": [...]}, ...]}
func (r *Result) AppendJSON(dst []byte) []byte {
	dst = appendReadHead(dst, r.Group, r.Version, r.Keys, r.Metrics, r.Token)
	for i := range r.Entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEntry(dst, &r.Entries[i], r.Keys, r.Metrics)
	}
	return append(dst, "]}"...)
}

// appendReadHead appends a read's JSON up to its first result.
func appendReadHead(dst []byte, group string, version int, keys []types.Column, metrics []Metric, tok Token) []byte {
	dst = append(dst, `{"metadata":{"group":`...)
	dst = appendString(dst, group)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(version), 10)
	dst = append(dst, `,"keys":`...)
	dst = appendColumnNames(dst, keys)
	dst = append(dst, `,"metrics":`...)
	dst = appendMetricNames(dst, metrics)
	dst = append(dst, `,"token":`...)
	dst = appendString(dst, tok.String())
	return append(dst, `},"results":[`...)
}

// AppendJSON appends the event as a JSON object (one line, for a
// server-sent event's data):
//
//	{"kind": "changes"|"snapshot", "group", "version", "reset", "token",
//	 "metrics": [names], "results": [entries as in a read's, or {"key": [...], "deleted": true}]}
//	{"kind": "redefined", "group", "version", "reset", "token",
//	 "keys": [{"name", "type"}], "metrics": [{"name", "type"}]}
//
// "token" is left out of the parts of a commit or snapshot before its
// last. The event of a whole commit to a subscriber of every key and
// metric is encoded once for all such subscribers.
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	b, err := e.SharedJSON()
	if err != nil || b != nil {
		return append(dst, b...), err
	}
	return e.appendJSON(dst)
}

// SharedJSON returns the encoding AppendJSON appends when it is shared
// by the subscribers of every key and metric (encoded at the first call
// for any of them), nil otherwise. The bytes must not be modified; a
// server writes them to each such subscriber without copying them.
func (e *Event) SharedJSON() ([]byte, error) {
	r := e.rec
	if r == nil {
		return nil, nil
	}
	if p := r.json.Load(); p != nil {
		return *p, nil
	}
	r.jsonMu.Lock()
	defer r.jsonMu.Unlock()
	if p := r.json.Load(); p != nil {
		return *p, nil
	}
	b, err := e.appendJSON(nil)
	if err != nil {
		return nil, err
	}
	r.json.Store(&b)
	r.jsonKept.keep(r)
	return b, nil
}

func (e *Event) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"kind":"`...)
	dst = append(dst, e.Kind.String()...)
	dst = append(dst, `","group":`...)
	dst = appendString(dst, e.Group.Name)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(e.Group.Version), 10)
	dst = append(dst, `,"reset":`...)
	dst = strconv.AppendBool(dst, e.Reset)
	if !e.Token.IsZero() {
		dst = append(dst, `,"token":`...)
		dst = appendString(dst, e.Token.String())
	}
	if e.Kind == Redefined {
		dst = append(dst, `,"keys":[`...)
		for i, k := range e.Group.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendNameType(dst, k.Name, k.Type)
		}
		dst = append(dst, `],"metrics":[`...)
		for i, m := range e.Group.Metrics {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendNameType(dst, m.Name, m.Type)
		}
		return append(dst, "]}"...), nil
	}
	dst = append(dst, `,"metrics":`...)
	dst = appendMetricNames(dst, e.Metrics)
	dst = append(dst, `,"results":[`...)
	entries, err := e.Entries()
	if err != nil {
		return dst, err
	}
	for i := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEntry(dst, &entries[i], e.Group.Keys, e.Metrics)
	}
	return append(dst, "]}"...), nil
}

func appendNameType(dst []byte, name string, t types.Type) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, name)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, t.String())
	return append(dst, '}')
}

func appendColumnNames(dst []byte, cols []types.Column) []byte {
	dst = append(dst, '[')
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, c.Name)
	}
	return append(dst, ']')
}

func appendMetricNames(dst []byte, ms []Metric) []byte {
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.Name)
	}
	return append(dst, ']')
}

func appendEntry(dst []byte, e *Entry, keys []types.Column, metrics []Metric) []byte {
	dst = append(dst, `{"key":[`...)
	for i, v := range e.Key {
		if i > 0 {
			dst = append(dst, ',')
		}
		var t types.Type
		if i < len(keys) {
			t = keys[i].Type
		}
		dst = appendValue(dst, v, t)
	}
	if e.Deleted {
		return append(dst, `],"deleted":true}`...)
	}
	dst = append(dst, `],"values":[`...)
	for i, v := range e.Values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendValue(dst, v, metrics[i].Type)
	}
	dst = append(dst, `],"statuses":[`...)
	for i, s := range e.Statuses {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, s.String()...)
		dst = append(dst, '"')
	}
	dst = append(dst, `],"event_timestamps":[`...)
	// Metrics changed together share their time: it is formatted once.
	prev, from, to := int64(0), 0, 0
	for i, t := range e.EventTimes {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch {
		case e.Statuses[i] == NotFound:
			dst = append(dst, "null"...)
		case to > from && t == prev:
			dst = append(dst, dst[from:to]...)
		default:
			from = len(dst)
			dst = append(dst, '"')
			dst = types.AppendTimestampISOZ(dst, t*1000, 3)
			dst = append(dst, '"')
			prev, to = t, len(dst)
		}
	}
	return append(dst, "]}"...)
}

// appendValue appends v (of type t, which supplies precisions) as JSON.
func appendValue(dst []byte, v types.Value, t types.Type) []byte {
	switch k := v.Kind(); {
	case k == types.KindNull:
		return append(dst, "null"...)
	case k == types.KindBoolean:
		return strconv.AppendBool(dst, v.Bool())
	case k.IsInteger():
		return strconv.AppendInt(dst, v.Int(), 10)
	case k == types.KindFloat || k == types.KindDouble:
		if f := v.Float(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			bits := 64
			if k == types.KindFloat {
				bits = 32
			}
			return strconv.AppendFloat(dst, f, 'g', -1, bits)
		}
	case k == types.KindDecimal:
		return types.AppendDecimal(dst, v)
	case k.IsString():
		return appendString(dst, v.Str())
	case k.IsBinary():
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		return append(dst, '"')
	case k == types.KindArray:
		var elem types.Type
		if t.Kind == types.KindArray && t.Elem != nil {
			elem = *t.Elem
		}
		dst = append(dst, '[')
		for i, x := range v.Elems() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, x, elem)
		}
		return append(dst, ']')
	}
	return appendString(dst, types.FormatValue(v, t))
}

// appendString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD, so that the output stays valid JSON.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
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
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ParseKeys parses a JSON array of keys of group g: each key is an array
// of its values in the order of the key columns, or an object of them by
// column name. A value is a JSON string, number, boolean or null,
// converted to its column's type as a CAST from that JSON type would
// (a timestamp from its text, say). Errors name the key and column.
func ParseKeys(g Group, data []byte) ([][]types.Value, error) {
	p := &jsonScanner{b: data}
	if !p.take('[') {
		return nil, p.fail("the keys are not a JSON array")
	}
	var keys [][]types.Value
	if p.take(']') {
		return keys, p.end()
	}
	for {
		i := len(keys)
		key := make([]types.Value, len(g.Keys))
		var err error
		switch p.peek() {
		case '[':
			err = p.arrayKey(g, i, key)
		case '{':
			err = p.objectKey(g, i, key)
		default:
			err = p.fail(fmt.Sprintf("key %d is neither an array of values nor an object of columns", i))
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
		if p.take(']') {
			return keys, p.end()
		}
		if !p.take(',') {
			return nil, p.fail("expected , or ] after key " + strconv.Itoa(i))
		}
	}
}

// arrayKey parses key i in array form into key.
func (p *jsonScanner) arrayKey(g Group, i int, key []types.Value) error {
	p.take('[')
	n := 0
	if !p.take(']') {
		for {
			if n >= len(g.Keys) {
				return fmt.Errorf("key %d has more than %d values; metric group %s is keyed by (%s): %w",
					i, len(g.Keys), g.Name, keyNames(g), ErrInvalid)
			}
			v, err := p.value(g, i, n)
			if err != nil {
				return err
			}
			key[n] = v
			n++
			if p.take(']') {
				break
			}
			if !p.take(',') {
				return p.fail(fmt.Sprintf("expected , or ] in key %d", i))
			}
		}
	}
	if n != len(g.Keys) {
		return fmt.Errorf("key %d has %d values; metric group %s is keyed by (%s): %w", i, n, g.Name, keyNames(g), ErrInvalid)
	}
	return nil
}

// objectKey parses key i in object form into key.
func (p *jsonScanner) objectKey(g Group, i int, key []types.Value) error {
	p.take('{')
	seen := make([]bool, len(g.Keys))
	if !p.take('}') {
		for {
			name, ok := p.str()
			if !ok {
				return p.fail(fmt.Sprintf("expected a column name in key %d", i))
			}
			if !p.take(':') {
				return p.fail(fmt.Sprintf("expected : after %q in key %d", name, i))
			}
			col := -1
			for j, k := range g.Keys {
				if k.Name == name {
					col = j
				}
			}
			if col < 0 {
				return fmt.Errorf("key %d: metric group %s has no key column named %q%s: %w",
					i, g.Name, name, suggest.Hint(name, columnNames(g.Keys)), ErrInvalid)
			}
			if seen[col] {
				return fmt.Errorf("key %d: column %s is given twice: %w", i, name, ErrInvalid)
			}
			v, err := p.value(g, i, col)
			if err != nil {
				return err
			}
			key[col], seen[col] = v, true
			if p.take('}') {
				break
			}
			if !p.take(',') {
				return p.fail(fmt.Sprintf("expected , or } in key %d", i))
			}
		}
	}
	for j, ok := range seen {
		if !ok {
			return fmt.Errorf("key %d has no value for key column %s: %w", i, g.Keys[j].Name, ErrInvalid)
		}
	}
	return nil
}

// value parses the value of key i's column col.
func (p *jsonScanner) value(g Group, i, col int) (types.Value, error) {
	c := g.Keys[col]
	at := p.i
	v, err := p.scalar(c.Type)
	if err != nil {
		return v, fmt.Errorf("key %d, column %s (at byte %d): %w: %w", i, c.Name, at, err, ErrInvalid)
	}
	return v, nil
}

func keyNames(g Group) string {
	out := ""
	for i, k := range g.Keys {
		if i > 0 {
			out += ", "
		}
		out += k.Name
	}
	return out
}

func columnNames(cols []types.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// jsonScanner reads the little JSON ParseKeys takes: arrays and objects
// of scalars.
type jsonScanner struct {
	b []byte
	i int
}

func (p *jsonScanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *jsonScanner) take(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonScanner) end() error {
	if p.peek() != 0 {
		return p.fail("unexpected text after the keys")
	}
	return nil
}

func (p *jsonScanner) fail(msg string) error {
	return fmt.Errorf("cannot read the keys at byte %d: %s: %w", p.i, msg, ErrInvalid)
}

// str reads a JSON string.
func (p *jsonScanner) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i
	esc := false
	for i := start + 1; i < len(p.b); i++ {
		switch p.b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			p.i = i + 1
			raw := p.b[start:p.i]
			if !esc {
				if !utf8.Valid(raw) {
					break
				}
				return string(raw[1 : len(raw)-1]), true
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				p.i = start
				return "", false
			}
			return s, true
		default:
			if p.b[i] < 0x20 {
				return "", false
			}
		}
	}
	p.i = start
	return "", false
}

// number reads a JSON number's text, and whether it is an integer.
func (p *jsonScanner) number() (string, bool, bool) {
	p.ws()
	start, i := p.i, p.i
	digits := func() int {
		n := 0
		for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(p.b) && p.b[i] == '-' {
		i++
	}
	// No leading zeros, as JSON has it.
	if i < len(p.b) && p.b[i] == '0' {
		i++
	} else if digits() == 0 {
		return "", false, false
	}
	integer := true
	if i < len(p.b) && p.b[i] == '.' {
		i++
		integer = false
		if digits() == 0 {
			return "", false, false
		}
	}
	if i < len(p.b) && (p.b[i] == 'e' || p.b[i] == 'E') {
		i++
		integer = false
		if i < len(p.b) && (p.b[i] == '+' || p.b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return "", false, false
		}
	}
	p.i = i
	return string(p.b[start:i]), integer, true
}

func (p *jsonScanner) word(w string) bool {
	p.ws()
	if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
		p.i += len(w)
		return true
	}
	return false
}

// scalar reads a JSON scalar as a value of type t.
func (p *jsonScanner) scalar(t types.Type) (types.Value, error) {
	switch c := p.peek(); {
	case c == '"':
		s, ok := p.str()
		if !ok {
			return types.Value{}, fmt.Errorf("malformed string")
		}
		if t.Kind == types.KindVarChar {
			return types.StringValue(s), nil
		}
		return cast(types.StringValue(s), types.String, t)
	case c == '-' || c >= '0' && c <= '9':
		text, integer, ok := p.number()
		if !ok {
			return types.Value{}, fmt.Errorf("malformed number")
		}
		if integer {
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				if t.Kind.IsInteger() {
					if lo, hi := types.IntegerRange(t.Kind); n < lo || n > hi {
						return types.Value{}, fmt.Errorf("%s is out of the range of %s", text, t)
					}
					return types.IntValue(t.Kind, n), nil
				}
				return cast(types.BigIntValue(n), types.BigInt, t)
			}
		}
		if t.Kind == types.KindFloat || t.Kind == types.KindDouble {
			f, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return types.Value{}, fmt.Errorf("%s is out of the range of %s", text, t)
			}
			if t.Kind == types.KindFloat {
				return types.FloatValue(float32(f)), nil
			}
			return types.DoubleValue(f), nil
		}
		d, err := types.ParseDecimal(text)
		if err != nil {
			return types.Value{}, fmt.Errorf("%s: %w", text, err)
		}
		return cast(d, types.Decimal(38, d.Scale()), t)
	case p.word("true"):
		return cast(types.BoolValue(true), types.Boolean, t)
	case p.word("false"):
		return cast(types.BoolValue(false), types.Boolean, t)
	case p.word("null"):
		return types.Value{}, nil
	case c == '[' || c == '{':
		return types.Value{}, fmt.Errorf("a key value is a JSON string, number, boolean or null")
	}
	return types.Value{}, fmt.Errorf("malformed value")
}

func cast(v types.Value, from, to types.Type) (types.Value, error) {
	if from.SameKind(to) {
		return v, nil
	}
	out, err := types.Cast(v, from, to)
	if err != nil {
		return out, fmt.Errorf("cannot read a %s as %s: %w", from, to, err)
	}
	return out, nil
}
