package changelog

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

// Formats returns the three changelog format factories.
func Formats() []format.Factory {
	return []format.Factory{Debezium(), Canal(), Maxwell()}
}

// envelope is what the three formats share: the options and the json row
// decoder and encoder.
type envelope struct {
	name   string
	schema types.Schema
	opts   json.Options
	row    *json.Decoder
	index  map[string]int // column name -> position
	seen   []bool         // scratch: the columns an "old" object holds
	text   []byte         // scratch for the type/op field
}

func newEnvelope(name string, schema types.Schema, opts json.Options) envelope {
	e := envelope{name: name, schema: schema, opts: opts, row: opts.NewDecoder(schema),
		index: make(map[string]int, schema.Len()), seen: make([]bool, schema.Len())}
	for i, c := range schema.Columns {
		e.index[c.Name] = i
	}
	return e
}

// parseOptions parses the json options of the format called name, and
// the extra keys it takes (read by the caller). 'fail-on-missing-field'
// is refused: an "old" object holds only the changed fields, and Flink's
// changelog formats do not take it either.
func parseOptions(name string, opts map[string]string, extra ...string) (json.Options, error) {
	if _, ok := opts["fail-on-missing-field"]; ok {
		return json.Options{}, fmt.Errorf("%s format: unsupported option '%s.fail-on-missing-field' (a json format option that changelog formats do not take)", name, name)
	}
	return json.ParseOptions(name, opts, extra...)
}

// decodeRow decodes the row object raw (the envelope field called field,
// its element i when i >= 0) into dst.
func (e *envelope) decodeRow(field string, i int, raw []byte, dst []types.Value) error {
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("field %q: %s, expected a row object", fieldName(field, i), describe(raw))
	}
	if err := e.row.Decode(raw, dst); err != nil {
		return fmt.Errorf("field %q: %w", fieldName(field, i), err)
	}
	return nil
}

func fieldName(field string, i int) string {
	if i < 0 {
		return field
	}
	return field + "[" + strconv.Itoa(i) + "]"
}

// decodeBefore decodes old, the changed fields of an update (envelope
// field called field), into before, and takes the fields old does not
// hold from after.
func (e *envelope) decodeBefore(field string, i int, old []byte, before, after []types.Value) error {
	if err := e.decodeRow(field, i, old, before); err != nil {
		return err
	}
	clear(e.seen)
	err := json.Members(old, func(name, _ []byte) error {
		if i, ok := e.index[string(name)]; ok {
			e.seen[i] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("field %q: %w", fieldName(field, i), err)
	}
	for j, s := range e.seen {
		if !s {
			before[j] = after[j]
		}
	}
	return nil
}

// str returns the contents of the string field called field, valid until
// the next call.
func (e *envelope) str(field string, raw []byte) (string, error) {
	if raw == nil {
		return "", fmt.Errorf("field %q: missing", field)
	}
	var err error
	if e.text, err = json.AppendText(e.text[:0], raw); err != nil {
		return "", fmt.Errorf("field %q: %w", field, err)
	}
	return string(e.text), nil
}

// decodeOne implements format.Decoder.Decode for a changelog decoder: the
// record must give exactly one +I row.
func decodeOne(name string, d format.ChangelogDecoder, data []byte, dst []types.Value) error {
	n, kind := 0, types.Insert
	err := d.DecodeChangelog(data, func(k types.RowKind) []types.Value {
		n++
		if n == 1 {
			kind = k
			return dst
		}
		return make([]types.Value, len(dst))
	})
	if err != nil {
		return err
	}
	if n != 1 || kind != types.Insert {
		return fmt.Errorf("%s format: the record stands for %d changes, not one insert: it must be read as a changelog", name, n)
	}
	return nil
}

// filter holds the 'database.include' and 'table.include' patterns of
// canal-json and maxwell-json.
type filter struct {
	database, table *regexp.Regexp
}

var filterOptions = []string{"database.include", "table.include"}

func parseFilter(name string, opts map[string]string) (filter, error) {
	var f filter
	for _, o := range []struct {
		key string
		re  **regexp.Regexp
	}{{"database.include", &f.database}, {"table.include", &f.table}} {
		v, ok := opts[o.key]
		if !ok {
			continue
		}
		re, err := regexp.Compile("^(?:" + v + ")$")
		if err != nil {
			return f, fmt.Errorf("%s format: option '%s.%s': invalid regular expression %q: %v", name, name, o.key, v, err)
		}
		*o.re = re
	}
	return f, nil
}

// match reports whether a record of database db and table tbl (raw JSON
// values, nil when absent) passes the filter.
func (f filter) match(e *envelope, db, tbl []byte) (bool, error) {
	for _, c := range []struct {
		field string
		re    *regexp.Regexp
		raw   []byte
	}{{"database", f.database, db}, {"table", f.table, tbl}} {
		if c.re == nil {
			continue
		}
		if c.raw == nil || json.IsNull(c.raw) {
			return false, nil
		}
		s, err := e.str(c.field, c.raw)
		if err != nil {
			return false, err
		}
		if !c.re.MatchString(s) {
			return false, nil
		}
	}
	return true, nil
}

// checkKind refuses a row kind outside the four (a corrupt row).
func checkKind(name string, k types.RowKind) error {
	if k > types.Delete {
		return fmt.Errorf("%s format: cannot encode a row of kind %s", name, k)
	}
	return nil
}

// describe names a raw envelope value for messages: "missing", "null" or
// the value, shortened.
func describe(raw []byte) string {
	switch {
	case raw == nil:
		return "missing"
	case json.IsNull(raw):
		return "null"
	case len(raw) > 40:
		return "got " + string(raw[:40]) + "..."
	}
	return "got " + string(raw)
}

// isEmpty reports whether a record is empty or blank: a Kafka tombstone,
// which stands for no change.
func isEmpty(data []byte) bool {
	for _, c := range data {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
