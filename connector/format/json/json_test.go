package json

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func col(name string, t types.Type) types.Column { return types.Column{Name: name, Type: t} }

func allSchema() types.Schema {
	return types.NewSchema(
		col("b", types.Boolean),
		col("ti", types.TinyInt),
		col("si", types.SmallInt),
		col("i", types.Int),
		col("bi", types.BigInt),
		col("f", types.Float),
		col("d", types.Double),
		col("dec", types.Decimal(10, 2)),
		col("bigdec", types.Decimal(38, 4)),
		col("s", types.String),
		col("c", types.Char(3)),
		col("by", types.Bytes),
		col("dt", types.Date),
		col("tm", types.Time(3)),
		col("ts", types.Timestamp(3)),
		col("ts9", types.Timestamp(6)),
		col("ltz", types.TimestampLTZ(3)),
		col("arr", types.ArrayOf(types.Int)),
		col("m", types.MapOf(types.String, types.Double)),
		col("mi", types.MapOf(types.Int, types.String)),
		col("r", types.RowOf(types.Field{Name: "x", Type: types.Int}, types.Field{Name: "y", Type: types.ArrayOf(types.String)})),
	)
}

func allRow() []types.Value {
	big38, _ := new(big.Int).SetString("12345678901234567890123456789", 10)
	return []types.Value{
		types.BoolValue(true),
		types.IntValue(types.KindTinyInt, -128),
		types.IntValue(types.KindSmallInt, 32767),
		types.Int32Value(-2147483648),
		types.BigIntValue(math.MaxInt64),
		types.FloatValue(1.25),
		types.DoubleValue(0.1),
		types.DecimalValue(400, 2),
		types.BigDecimalValue(big38, 4),
		types.StringValue("héllo \"wörld\"\n\t\\ \x01"),
		types.CharValue("abc"),
		types.BytesValue([]byte{0, 1, 2, 0xff}),
		types.DateValue(18367),
		types.TimeValue((8*3600+5*60)*1e6 + 123000),
		types.TimestampValue(1586937900000000),
		types.TimestampValue(1586937900123456),
		types.TimestampLTZValue(1586937900500000),
		types.ArrayValue([]types.Value{types.Int32Value(1), types.NullValue, types.Int32Value(3)}),
		types.NewMapValue(&types.MapValue{Keys: []types.Value{types.StringValue("a"), types.StringValue("b")},
			Values: []types.Value{types.DoubleValue(1.5), types.NullValue}}),
		types.NewMapValue(&types.MapValue{Keys: []types.Value{types.Int32Value(7)}, Values: []types.Value{types.StringValue("seven")}}),
		types.RowValue([]types.Value{types.Int32Value(9), types.ArrayValue([]types.Value{types.StringValue("p"), types.StringValue("q")})}),
	}
}

func equalValues(t *testing.T, got, want []types.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if !deepEqual(got[i], want[i]) {
			t.Errorf("value %d: got %#v, want %#v", i, got[i], want[i])
		}
	}
}

// deepEqual compares values including their kinds and decimal scales.
func deepEqual(a, b types.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case types.KindDecimal:
		return a.Scale() == b.Scale() && types.Equal(a, b)
	case types.KindArray, types.KindMultiset, types.KindRow:
		ea, eb := a.Elems(), b.Elems()
		if len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if !deepEqual(ea[i], eb[i]) {
				return false
			}
		}
		return true
	case types.KindMap:
		ma, mb := a.Map(), b.Map()
		if len(ma.Keys) != len(mb.Keys) {
			return false
		}
		for i := range ma.Keys {
			if !deepEqual(ma.Keys[i], mb.Keys[i]) || !deepEqual(ma.Values[i], mb.Values[i]) {
				return false
			}
		}
		return true
	case types.KindFloat, types.KindDouble:
		return a.Float() == b.Float() || math.IsNaN(a.Float()) && math.IsNaN(b.Float())
	}
	return types.Equal(a, b)
}

func roundTrip(t *testing.T, schema types.Schema, opts map[string]string, row []types.Value) string {
	t.Helper()
	enc, err := New().NewEncoder(schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := New().NewDecoder(schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.Encode(nil, types.Row{Vals: row})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]types.Value, schema.Len())
	if err := dec.Decode(out, got); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	equalValues(t, got, row)
	return string(out)
}

func TestRoundTripSQL(t *testing.T) {
	out := roundTrip(t, allSchema(), nil, allRow())
	want := `{"b":true,"ti":-128,"si":32767,"i":-2147483648,"bi":9223372036854775807,"f":1.25,"d":0.1,` +
		`"dec":4.00,"bigdec":1234567890123456789012345.6789,"s":"héllo \"wörld\"\n\t\\ \u0001","c":"abc",` +
		`"by":"AAEC/w==","dt":"2020-04-15","tm":"08:05:00.123","ts":"2020-04-15 08:05:00",` +
		`"ts9":"2020-04-15 08:05:00.123456","ltz":"2020-04-15 08:05:00.5Z","arr":[1,null,3],` +
		`"m":{"a":1.5,"b":null},"mi":{"7":"seven"},"r":{"x":9,"y":["p","q"]}}`
	if out != want {
		t.Errorf("encoded:\n%s\nwant:\n%s", out, want)
	}
}

func TestRoundTripISO(t *testing.T) {
	out := roundTrip(t, allSchema(), map[string]string{"timestamp-format.standard": "ISO-8601"}, allRow())
	for _, want := range []string{`"ts":"2020-04-15T08:05:00"`, `"ts9":"2020-04-15T08:05:00.123456"`, `"ltz":"2020-04-15T08:05:00.5Z"`} {
		if !strings.Contains(out, want) {
			t.Errorf("encoded %s: missing %s", out, want)
		}
	}
}

func TestRoundTripNulls(t *testing.T) {
	row := make([]types.Value, allSchema().Len())
	out := roundTrip(t, allSchema(), nil, row)
	if !strings.HasPrefix(out, `{"b":null,"ti":null,`) {
		t.Errorf("encoded %s", out)
	}
	enc, _ := New().NewEncoder(allSchema(), map[string]string{"encode.ignore-null-fields": "true"})
	b, err := enc.Encode(nil, types.Row{Vals: row})
	if err != nil || string(b) != "{}" {
		t.Errorf("ignore-null-fields: %s, %v", b, err)
	}
}

func TestEncodeNumbers(t *testing.T) {
	schema := types.NewSchema(col("d", types.Double), col("f", types.Float), col("x", types.Decimal(20, 9)))
	for _, tc := range []struct {
		row   []types.Value
		plain bool
		want  string
	}{
		{[]types.Value{types.DoubleValue(1), types.FloatValue(0.1), types.DecimalValue(1, 9)}, false,
			`{"d":1.0,"f":0.1,"x":1E-9}`},
		{[]types.Value{types.DoubleValue(1e7), types.FloatValue(1e-4), types.DecimalValue(-123, 9)}, true,
			`{"d":1.0E7,"f":1.0E-4,"x":-0.000000123}`},
		{[]types.Value{types.DoubleValue(-1.5e-300), types.FloatValue(123456.7), types.DecimalValue(-123, 9)}, false,
			`{"d":-1.5E-300,"f":123456.7,"x":-1.23E-7}`},
		{[]types.Value{types.DoubleValue(math.NaN()), types.FloatValue(float32(math.Inf(-1))), types.DecimalValue(1234567, 9)}, false,
			`{"d":"NaN","f":"-Infinity","x":0.001234567}`},
	} {
		opts := map[string]string{}
		if tc.plain {
			opts["encode.decimal-as-plain-number"] = "true"
		}
		out := roundTrip(t, schema, opts, tc.row)
		if out != tc.want {
			t.Errorf("got %s, want %s", out, tc.want)
		}
	}
}

func TestMapNullKey(t *testing.T) {
	schema := types.NewSchema(col("m", types.MapOf(types.String, types.Int)))
	row := types.Row{Vals: []types.Value{types.NewMapValue(&types.MapValue{
		Keys:   []types.Value{types.NullValue, types.StringValue("k")},
		Values: []types.Value{types.Int32Value(1), types.Int32Value(2)}})}}
	for _, tc := range []struct{ mode, lit, want string }{
		{"", "", `field "m": map has a NULL key`},
		{"DROP", "", `{"m":{"k":2}}`},
		{"LITERAL", "", `{"m":{"null":1,"k":2}}`},
		{"LITERAL", "N/A", `{"m":{"N/A":1,"k":2}}`},
	} {
		opts := map[string]string{}
		if tc.mode != "" {
			opts["map-null-key.mode"] = tc.mode
		}
		if tc.lit != "" {
			opts["map-null-key.literal"] = tc.lit
		}
		enc, err := New().NewEncoder(schema, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := enc.Encode(nil, row)
		got := string(b)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("mode %q: got %s, want %s", tc.mode, got, tc.want)
		}
	}
}

func bidSchema() types.Schema {
	return types.NewSchema(
		col("bidtime", types.Timestamp(3)),
		col("price", types.Decimal(10, 2)),
		col("item", types.String),
		col("supplier_id", types.String),
		col("qty", types.Int),
		col("rate", types.Double),
		col("ok", types.Boolean),
	)
}

func decode(t *testing.T, schema types.Schema, opts map[string]string, rec string) ([]types.Value, error) {
	t.Helper()
	dec, err := New().NewDecoder(schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]types.Value, schema.Len())
	err = dec.Decode([]byte(rec), dst)
	return dst, err
}

func TestDecodeLenient(t *testing.T) {
	// Fields out of order, unknown fields (nested) skipped, missing fields
	// NULL, numbers as strings and strings as numbers, escaped names.
	rec := ` { "extra": {"a": [1, {"b": null}], "c": "x\"y"}, "qty": "42", "price": "4.005",
		"item": 12.50, "bidtime": "2020-04-15 08:05:00.123456", "supplier\u005fid": {"k": [true]},
		"ok": "TRUE", "more": [] } `
	got, err := decode(t, bidSchema(), nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{
		types.TimestampValue(1586937900123000),
		types.DecimalValue(401, 2), // HALF_UP
		types.StringValue("12.50"),
		types.StringValue(`{"k": [true]}`),
		types.Int32Value(42),
		types.NullValue,
		types.BoolValue(true),
	})
}

func TestDecodeDecimals(t *testing.T) {
	schema := types.NewSchema(col("a", types.Decimal(5, 2)), col("b", types.Decimal(38, 10)), col("c", types.Decimal(4, 0)))
	got, err := decode(t, schema, nil, `{"a": 123.456, "b": 0.1, "c": 12345}`)
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{types.DecimalValue(12346, 2), types.DecimalValue(1000000000, 10), types.NullValue})
	got, err = decode(t, schema, nil, `{"a": -1.5E2, "b": 12345678901234567890.0123456789}`)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := new(big.Int).SetString("123456789012345678900123456789", 10)
	equalValues(t, got, []types.Value{types.DecimalValue(-15000, 2), types.BigDecimalValue(u, 10), types.NullValue})
}

func TestDecodeTimestampStandards(t *testing.T) {
	schema := types.NewSchema(col("ts", types.Timestamp(3)), col("ltz", types.TimestampLTZ(3)))
	got, err := decode(t, schema, nil, `{"ts": "2020-04-15 08:05:00", "ltz": "2020-04-15 08:05:00.001Z"}`)
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{types.TimestampValue(1586937900000000), types.TimestampLTZValue(1586937900001000)})
	iso := map[string]string{"timestamp-format.standard": "ISO-8601"}
	got, err = decode(t, schema, iso, `{"ts": "2020-04-15T08:05:00", "ltz": "2020-04-15T10:05:00+02:00"}`)
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{types.TimestampValue(1586937900000000), types.TimestampLTZValue(1586937900000000)})
	if _, err := decode(t, schema, iso, `{"ts": "2020-04-15 08:05:00"}`); err == nil ||
		err.Error() != `field "ts": cannot parse "2020-04-15 08:05:00" as TIMESTAMP(3): expected the ISO-8601 format (option 'timestamp-format.standard')` {
		t.Errorf("err = %v", err)
	}
	if _, err := decode(t, schema, nil, `{"ts": "2020-04-15 08:05:00Z"}`); err == nil || !strings.Contains(err.Error(), "no time zone") {
		t.Errorf("err = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		rec  string
		want string
	}{
		{nil, `{"price":4.x}`, `field "price": invalid number "4.x"`},
		{nil, `{"price":"4.x"}`, `field "price": invalid number "4.x" for DECIMAL(10, 2)`},
		{nil, `{"qty":1.5}`, `field "qty": cannot read 1.5 as INT`},
		{nil, `{"qty":99999999999}`, `field "qty": value 99999999999 out of range for INT`},
		{nil, `{"qty":"abc"}`, `field "qty": cannot parse "abc" as INT`},
		{nil, `{"qty":[1]}`, `field "qty": cannot read a JSON array as INT`},
		{nil, `{"ok":1}`, `field "ok": cannot read JSON number 1 as BOOLEAN`},
		{nil, `{"bidtime":"yesterday"}`, `field "bidtime": cannot parse "yesterday" as TIMESTAMP(3)`},
		{nil, `{"item":"abc}`, `field "item": invalid JSON: unterminated string`},
		{nil, `{"item":"abc"`, `invalid JSON: unexpected end of record, expected ',' or '}'`},
		{nil, `{"item" "abc"}`, `invalid JSON at byte 8: unexpected '"', expected ':'`},
		{nil, `{"item":"a"} x`, `invalid JSON at byte 13: unexpected 'x', expected the end of the record`},
		{nil, `[1]`, `invalid JSON at byte 0: unexpected '[', expected a JSON object`},
		{nil, ``, `invalid JSON: unexpected end of record, expected a JSON object`},
		{nil, `{"extra":[1,}`, `field "extra": invalid JSON at byte 12: unexpected '}', expected a value`},
		{nil, `{"item":"a\qb"}`, `field "item": invalid JSON: bad escape '\q'`},
		{nil, `{"item":nul}`, `field "item": invalid JSON at byte 8: unexpected 'n', expected a value`},
		{map[string]string{"fail-on-missing-field": "true"}, `{"item":"a"}`, `field "bidtime": missing (option 'fail-on-missing-field' is set)`},
	} {
		_, err := decode(t, bidSchema(), tc.opts, tc.rec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.rec, err, tc.want)
		}
	}
	schema := types.NewSchema(col("r", types.RowOf(types.Field{Name: "a", Type: types.ArrayOf(types.RowOf(types.Field{Name: "n", Type: types.Int}))})))
	if _, err := decode(t, schema, nil, `{"r":{"a":[{"n":1},{"n":"x"}]}}`); err == nil || err.Error() != `field "r.a[1].n": cannot parse "x" as INT` {
		t.Errorf("nested: %v", err)
	}
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if _, err := decode(t, schema, nil, `{"x":`+deep+`}`); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Errorf("deep: %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"fail-on-missing-feld": "true"}, `unsupported option 'json.fail-on-missing-feld' (did you mean "fail-on-missing-field"?)`},
		{map[string]string{"timestamp-format.standard": "RFC"}, `unsupported value 'RFC'`},
		{map[string]string{"fail-on-missing-field": "yes"}, `expected true or false`},
		{map[string]string{"fail-on-missing-field": "true", "ignore-parse-errors": "true"}, `cannot both be true`},
	} {
		_, err := New().NewDecoder(bidSchema(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %s", tc.opts, err, tc.want)
		}
	}
}

func TestNoAliasing(t *testing.T) {
	schema := types.NewSchema(col("s", types.String))
	dec := NewDecoder(schema, false, false)
	buf := []byte(`{"s":"hello"}`)
	dst := make([]types.Value, 1)
	if err := dec.Decode(buf, dst); err != nil {
		t.Fatal(err)
	}
	copy(buf, `{"s":"XXXXX"}`)
	if dst[0].Str() != "hello" {
		t.Fatalf("string aliases the input: %q", dst[0].Str())
	}
}

func TestMultiset(t *testing.T) {
	schema := types.NewSchema(col("ms", types.Type{Kind: types.KindMultiset, Elem: &types.String}))
	row := []types.Value{types.MultisetValue([]types.Value{types.StringValue("a"), types.StringValue("b"), types.StringValue("a")})}
	enc, _ := New().NewEncoder(schema, nil)
	out, err := enc.Encode(nil, types.Row{Vals: row})
	if err != nil || string(out) != `{"ms":{"a":2,"b":1}}` {
		t.Fatalf("encoded %s, %v", out, err)
	}
	got, err := decode(t, schema, nil, string(out))
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{types.MultisetValue([]types.Value{types.StringValue("a"), types.StringValue("a"), types.StringValue("b")})})
}

func TestDuplicateFields(t *testing.T) {
	schema := types.NewSchema(col("a", types.String), col("b", types.String), col("r", types.RowOf(types.Field{Name: "x", Type: types.String})))
	got, err := decode(t, schema, nil, `{"a":"first","b":"one","a":null,"b":"two","r":{"x":"p","x":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	equalValues(t, got, []types.Value{types.NullValue, types.StringValue("two"), types.RowValue([]types.Value{types.StringValue("true")})})
}

func TestFastFloat(t *testing.T) {
	for _, lit := range []string{"0", "-0", "0.125", "1.1", "-123456789012345", "0.000000000000001", "9007199254740.993",
		"3.141592653589793", "1234567890123456", "1e5", "0.1000000000000000055511151231257827"} {
		want, _ := strconv.ParseFloat(lit, 64)
		got, err := fromNumber(compile(types.Double), []byte(lit), true)
		if err != nil || got.Float() != want || math.Signbit(got.Float()) != math.Signbit(want) {
			t.Errorf("%s: got %v (%v), want %v", lit, got.Float(), err, want)
		}
	}
}
