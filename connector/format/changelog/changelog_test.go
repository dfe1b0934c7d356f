package changelog

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

var schema = types.Schema{Columns: []types.Column{
	{Name: "id", Type: types.BigInt},
	{Name: "name", Type: types.String},
	{Name: "price", Type: types.Type{Kind: types.KindDecimal, Precision: 10, Scale: 2}},
}}

func row(kind types.RowKind, id int64, name string, cents int64) types.Row {
	n := types.NullValue
	if name != "" {
		n = types.StringValue(name)
	}
	return types.Row{Kind: kind, Vals: []types.Value{types.IntValue(types.KindBigInt, id), n, types.DecimalValue(cents, 2)}}
}

// show prints a decoded row as print does: +I[1, a, 1.50].
func show(kind types.RowKind, vals []types.Value) string {
	var b []byte
	b = append(b, kind.String()...)
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		if v.IsNull() {
			b = append(b, "null"...)
			continue
		}
		b = types.AppendValue(b, v, schema.Columns[i].Type)
	}
	return string(append(b, ']'))
}

// decodeAll decodes one record into its printed rows.
func decodeAll(t *testing.T, dec format.Decoder, rec string) ([]string, error) {
	t.Helper()
	cd, ok := dec.(format.ChangelogDecoder)
	if !ok {
		t.Fatalf("%T is not a ChangelogDecoder", dec)
	}
	var kinds []types.RowKind
	var rows [][]types.Value
	err := cd.DecodeChangelog([]byte(rec), func(k types.RowKind) []types.Value {
		kinds = append(kinds, k)
		rows = append(rows, make([]types.Value, schema.Len()))
		return rows[len(rows)-1]
	})
	var out []string
	for i := range rows {
		out = append(out, show(kinds[i], rows[i]))
	}
	return out, err
}

func factory(t testing.TB, name string) format.Factory {
	t.Helper()
	for _, f := range Formats() {
		if f.Name() == name {
			if !format.IsChangelog(f) {
				t.Fatalf("%s is not a changelog format", name)
			}
			return f
		}
	}
	t.Fatalf("no format %s", name)
	return nil
}

func TestEncode(t *testing.T) {
	rows := []types.Row{
		row(types.Insert, 1, "a", 150),
		row(types.UpdateBefore, 1, "a", 150),
		row(types.UpdateAfter, 1, "b", 275),
		row(types.Delete, 2, "", -5),
	}
	want := map[string][]string{
		"debezium-json": {
			`{"before":null,"after":{"id":1,"name":"a","price":1.50},"op":"c"}`,
			`{"before":{"id":1,"name":"a","price":1.50},"after":null,"op":"d"}`,
			`{"before":null,"after":{"id":1,"name":"b","price":2.75},"op":"c"}`,
			`{"before":{"id":2,"name":null,"price":-0.05},"after":null,"op":"d"}`,
		},
		"canal-json": {
			`{"data":[{"id":1,"name":"a","price":1.50}],"type":"INSERT"}`,
			`{"data":[{"id":1,"name":"a","price":1.50}],"type":"DELETE"}`,
			`{"data":[{"id":1,"name":"b","price":2.75}],"type":"INSERT"}`,
			`{"data":[{"id":2,"name":null,"price":-0.05}],"type":"DELETE"}`,
		},
		"maxwell-json": {
			`{"data":{"id":1,"name":"a","price":1.50},"type":"insert"}`,
			`{"data":{"id":1,"name":"a","price":1.50},"type":"delete"}`,
			`{"data":{"id":1,"name":"b","price":2.75},"type":"insert"}`,
			`{"data":{"id":2,"name":null,"price":-0.05},"type":"delete"}`,
		},
	}
	for name, lines := range want {
		f := factory(t, name)
		enc, err := f.NewEncoder(schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := f.NewDecoder(schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			got, err := enc.Encode([]byte("prefix:"), r)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, r.Kind, err)
			}
			if string(got) != "prefix:"+lines[i] {
				t.Errorf("%s: %s:\n got %s\nwant %s", name, r.Kind, got, lines[i])
			}
			// What is written reads back as the same row: an insert for
			// +I/+U, a delete for -U/-D.
			back, err := decodeAll(t, dec, lines[i])
			if err != nil {
				t.Fatalf("%s: cannot decode %s: %v", name, lines[i], err)
			}
			wantKind := types.Insert
			if !r.Kind.IsAccumulate() {
				wantKind = types.Delete
			}
			if w := show(wantKind, r.Vals); len(back) != 1 || back[0] != w {
				t.Errorf("%s: %s decodes to %v, want [%s]", name, lines[i], back, w)
			}
		}
	}
}

func TestEncodeOptions(t *testing.T) {
	enc, err := Debezium().NewEncoder(schema, map[string]string{"encode.ignore-null-fields": "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(nil, row(types.Insert, 7, "", 100))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"before":null,"after":{"id":7,"price":1.00},"op":"c"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := Debezium().NewEncoder(schema, map[string]string{"schema-include": "true"}); err == nil ||
		!strings.Contains(err.Error(), "reading only") {
		t.Errorf("schema-include on a sink: got %v", err)
	}
	if _, err := Canal().NewDecoder(schema, map[string]string{"ignore-parse-error": "true"}); err == nil ||
		!strings.Contains(err.Error(), "unsupported option 'canal-json.ignore-parse-error'") ||
		!strings.Contains(err.Error(), "ignore-parse-errors") {
		t.Errorf("misspelt option: got %v", err)
	}
	if _, err := Debezium().NewDecoder(schema, map[string]string{"fail-on-missing-field": "true"}); err == nil ||
		!strings.Contains(err.Error(), "unsupported option 'debezium-json.fail-on-missing-field'") {
		t.Errorf("fail-on-missing-field: got %v", err)
	}
	if _, err := Maxwell().NewDecoder(schema, map[string]string{"table.include": "("}); err == nil ||
		!strings.Contains(err.Error(), "maxwell-json.table.include") {
		t.Errorf("bad pattern: got %v", err)
	}
}

func TestDecode(t *testing.T) {
	cases := []struct {
		format string
		opts   map[string]string
		rec    string
		want   []string
	}{
		// debezium: every op, a snapshot read, the schema envelope, and
		// the source metadata a real record carries.
		{"debezium-json", nil, `{"before":null,"after":{"id":1,"name":"a","price":1.5},"op":"c"}`, []string{"+I[1, a, 1.50]"}},
		{"debezium-json", nil, `{"after":{"id":1,"name":"a","price":"1.5"},"op":"r","source":{"db":"x"},"ts_ms":1}`, []string{"+I[1, a, 1.50]"}},
		{"debezium-json", nil, `{"op":"u","after":{"id":1,"name":"b","price":2},"before":{"id":1,"name":"a","price":1.5}}`,
			[]string{"-U[1, a, 1.50]", "+U[1, b, 2.00]"}},
		{"debezium-json", nil, `{"before":{"id":1,"name":"b"},"after":null,"op":"d"}`, []string{"-D[1, b, null]"}},
		{"debezium-json", map[string]string{"schema-include": "true"},
			`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":3,"name":"c","price":0},"op":"c"}}`, []string{"+I[3, c, 0.00]"}},
		// canal: several rows in one record, and an update whose "old"
		// holds the changed fields only.
		{"canal-json", nil, `{"data":[{"id":"1","name":"a","price":"1.5"},{"id":"2","name":"b","price":"2"}],"database":"db","table":"t","type":"INSERT"}`,
			[]string{"+I[1, a, 1.50]", "+I[2, b, 2.00]"}},
		{"canal-json", nil, `{"data":[{"id":"1","name":"a","price":"1.75"},{"id":"2","name":"z","price":"2"}],"old":[{"price":"1.5"},{"name":"b"}],"type":"UPDATE"}`,
			[]string{"-U[1, a, 1.50]", "+U[1, a, 1.75]", "-U[2, b, 2.00]", "+U[2, z, 2.00]"}},
		{"canal-json", nil, `{"data":[{"id":"1","name":null,"price":"1.5"}],"old":[{"name":"a"}],"type":"UPDATE"}`,
			[]string{"-U[1, a, 1.50]", "+U[1, null, 1.50]"}},
		{"canal-json", nil, `{"data":[{"id":1}],"type":"DELETE"}`, []string{"-D[1, null, null]"}},
		{"canal-json", nil, `{"data":null,"type":"CREATE","isDdl":true,"sql":"CREATE TABLE t"}`, nil},
		{"canal-json", map[string]string{"database.include": "inv.*", "table.include": "products"},
			`{"data":[{"id":1}],"database":"other","table":"products","type":"INSERT"}`, nil},
		{"canal-json", map[string]string{"database.include": "inv.*", "table.include": "products"},
			`{"data":[{"id":1}],"database":"inventory","table":"products","type":"INSERT"}`, []string{"+I[1, null, null]"}},
		// maxwell
		{"maxwell-json", nil, `{"database":"d","table":"t","type":"insert","ts":1,"data":{"id":1,"name":"a","price":1.5}}`, []string{"+I[1, a, 1.50]"}},
		{"maxwell-json", nil, `{"type":"update","data":{"id":1,"name":"a","price":1.75},"old":{"price":1.5}}`,
			[]string{"-U[1, a, 1.50]", "+U[1, a, 1.75]"}},
		{"maxwell-json", nil, `{"type":"delete","data":{"id":1,"name":"a","price":1.75}}`, []string{"-D[1, a, 1.75]"}},
		{"maxwell-json", nil, `{"type":"bootstrap-start","data":{}}`, nil},
		{"maxwell-json", nil, `{"type":"bootstrap-insert","data":{"id":9}}`, []string{"+I[9, null, null]"}},
		{"maxwell-json", map[string]string{"table.include": "t"}, `{"type":"insert","table":"u","data":{"id":9}}`, nil},
		// An empty record (a Kafka tombstone) stands for no change.
		{"debezium-json", nil, "", nil},
		{"canal-json", nil, " ", nil},
		{"maxwell-json", nil, "", nil},
	}
	for _, c := range cases {
		dec, err := factory(t, c.format).NewDecoder(schema, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeAll(t, dec, c.rec)
		if err != nil {
			t.Errorf("%s %s: %v", c.format, c.rec, err)
			continue
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s %s:\n got %v\nwant %v", c.format, c.rec, got, c.want)
		}
	}
}

// TestDecodeOne: through the plain Decoder interface a record must be one
// insert.
func TestDecodeOne(t *testing.T) {
	dec, err := Debezium().NewDecoder(schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]types.Value, schema.Len())
	if err := dec.Decode([]byte(`{"after":{"id":4},"op":"c"}`), dst); err != nil || dst[0].Int() != 4 {
		t.Fatalf("insert: %v %v", err, dst)
	}
	err = dec.Decode([]byte(`{"before":{"id":4},"after":{"id":4},"op":"u"}`), make([]types.Value, schema.Len()))
	if err == nil || !strings.Contains(err.Error(), "read as a changelog") {
		t.Errorf("update through Decode: got %v", err)
	}
}

func TestMalformed(t *testing.T) {
	cases := []struct {
		format string
		opts   map[string]string
		rec    string
		want   string
	}{
		{"debezium-json", nil, `{"before":null,"after":{"id":1},"op":"c"`, "unexpected end of record"},
		{"debezium-json", nil, `[1]`, "expected a JSON object"},
		{"debezium-json", nil, `{"after":{"id":1}}`, `field "op": missing`},
		{"debezium-json", nil, `{"after":{"id":1},"op":"x"}`, `field "op": unknown value "x", expected "c", "r", "u" or "d"`},
		{"debezium-json", nil, `{"after":{"id":1},"op":1}`, `field "op": expected a JSON string, got 1`},
		{"debezium-json", nil, `{"after":null,"op":"c"}`, `field "after": null, expected a row object`},
		{"debezium-json", nil, `{"after":[1],"op":"c"}`, `field "after": got [1], expected a row object`},
		{"debezium-json", nil, `{"after":{"id":"x"},"op":"c"}`, `field "after": field "id": cannot parse "x" as BIGINT`},
		{"debezium-json", nil, `{"before":null,"after":{"id":1},"op":"u"}`, `field "before": null in an update`},
		{"debezium-json", nil, `{"after":{"id":1},"op":"d"}`, `field "before": null in a delete`},
		{"debezium-json", nil, `{"schema":{},"payload":{"after":{"id":1},"op":"c"}}`, `set 'debezium-json.schema-include' = 'true'`},
		{"debezium-json", map[string]string{"schema-include": "true"}, `{"after":{"id":1},"op":"c"}`, `field "payload": missing`},
		{"canal-json", nil, `{"data":[{"id":1}],"type":"UPSERT"}`, `field "type": unknown value "UPSERT"`},
		{"canal-json", nil, `{"data":{"id":1},"type":"INSERT"}`, `field "data": got {"id":1}, expected an array of rows`},
		{"canal-json", nil, `{"type":"INSERT"}`, `field "data": missing, expected an array of rows`},
		{"canal-json", nil, `{"data":[{"id":1},7],"type":"DELETE"}`, `field "data[1]": got 7, expected a row object`},
		{"canal-json", nil, `{"data":[{"id":1}],"type":"UPDATE"}`, `field "old": missing, expected an array`},
		{"canal-json", nil, `{"data":[{"id":1},{"id":2}],"old":[{}],"type":"UPDATE"}`, `field "old": 1 elements, expected one per element of "data"`},
		{"canal-json", nil, `{"data":[{"id":1}],"old":[{},{}],"type":"UPDATE"}`, `field "old": 2 elements`},
		{"maxwell-json", nil, `{"type":"update","data":{"id":1}}`, `field "old": missing, expected a row object`},
		{"maxwell-json", nil, `{"type":"insert"}`, `field "data": missing`},
		{"maxwell-json", nil, `{"type":"INSERT","data":{"id":1}}`, `field "type": unknown value "INSERT", expected "insert", "update" or "delete"`},
	}
	for _, c := range cases {
		dec, err := factory(t, c.format).NewDecoder(schema, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeAll(t, dec, c.rec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: got error %v, want one containing %q", c.format, c.rec, err, c.want)
		}
	}
}
