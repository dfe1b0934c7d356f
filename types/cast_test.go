package types

import (
	"math"
	"testing"
	"time"
)

func TestCast(t *testing.T) {
	const errV = "ERROR"
	ts := int64(18367)*MicrosPerDay + 8*MicrosPerHour + 5*MicrosPerMinute + 123456
	tests := []struct {
		name     string
		v        Value
		from, to Type
		want     string // FormatValue of the result in type to, or errV
	}{
		{"null", NullValue, Int, String, "NULL"},
		// numeric ↔ numeric
		{"int→bigint", Int32Value(5), Int, BigInt, "5"},
		{"bigint→tinyint overflow", BigIntValue(300), BigInt, TinyInt, errV},
		{"bigint→int", BigIntValue(-2147483648), BigInt, Int, "-2147483648"},
		{"bigint→int overflow", BigIntValue(2147483648), BigInt, Int, errV},
		{"double→int truncates", DoubleValue(-3.99), Double, Int, "-3"},
		{"double→int truncates up", DoubleValue(3.99), Double, Int, "3"},
		{"double→int NaN", DoubleValue(math.NaN()), Double, Int, errV},
		{"double→bigint overflow", DoubleValue(1e19), Double, BigInt, errV},
		{"decimal→int truncates", DecimalValue(-1299, 2), Decimal(5, 2), Int, "-12"},
		{"int→decimal", Int32Value(12), Int, Decimal(5, 2), "12.00"},
		{"int→decimal overflow is NULL", Int32Value(1234), Int, Decimal(5, 2), "NULL"},
		{"decimal rescale half-up", DecimalValue(12345, 3), Decimal(6, 3), Decimal(5, 2), "12.35"},
		{"double→decimal", DoubleValue(0.1), Double, Decimal(10, 3), "0.100"},
		{"double→decimal NaN", DoubleValue(math.NaN()), Double, Decimal(10, 3), "NULL"},
		{"decimal→double", DecimalValue(1, 1), Decimal(2, 1), Double, "0.1"},
		{"int→double", Int32Value(3), Int, Double, "3.0"},
		{"double→float", DoubleValue(0.1), Double, Float, "0.1"},
		// boolean
		{"bool→int", BoolValue(true), Boolean, Int, "1"},
		{"int→bool", Int32Value(-2), Int, Boolean, "TRUE"},
		{"double→bool", DoubleValue(0), Double, Boolean, "FALSE"},
		{"bool→decimal", BoolValue(true), Boolean, Decimal(3, 1), "1.0"},
		{"str→bool yes", StringValue(" YES "), String, Boolean, "TRUE"},
		{"str→bool 0", StringValue("0"), String, Boolean, "FALSE"},
		{"str→bool bad", StringValue("maybe"), String, Boolean, errV},
		// string → numeric
		{"str→int", StringValue(" 42 "), String, Int, "42"},
		{"str→int frac", StringValue("-4.7"), String, Int, "-4"},
		{"str→int plus", StringValue("+7"), String, Int, "7"},
		{"str→int bad", StringValue("abc"), String, Int, errV},
		{"str→int empty", StringValue(""), String, Int, errV},
		{"str→tinyint overflow", StringValue("128"), String, TinyInt, errV},
		{"str→bigint min", StringValue("-9223372036854775808"), String, BigInt, "-9223372036854775808"},
		{"str→bigint overflow", StringValue("9223372036854775808"), String, BigInt, errV},
		{"str→double", StringValue("1e3"), String, Double, "1000.0"},
		{"str→double bad", StringValue("1,5"), String, Double, errV},
		{"str→double NaN", StringValue("NaN"), String, Double, "NaN"},
		{"str→decimal", StringValue(" 3.14159 "), String, Decimal(5, 2), "3.14"},
		{"str→decimal overflow", StringValue("1000"), String, Decimal(5, 2), "NULL"},
		{"str→decimal bad", StringValue("x"), String, Decimal(5, 2), errV},
		// → string
		{"int→str", Int32Value(-7), Int, String, "-7"},
		{"double→str", DoubleValue(1e10), Double, String, "1.0E10"},
		{"decimal→str", DecimalValue(120, 2), Decimal(5, 2), String, "1.20"},
		{"bool→str", BoolValue(true), Boolean, String, "TRUE"},
		{"ts→str", TimestampValue(ts), Timestamp(3), String, "2020-04-15 08:05:00.123"},
		{"date→str", DateValue(18367), Date, String, "2020-04-15"},
		{"str→varchar(3)", StringValue("abcdef"), String, VarChar(3), "abc"},
		{"str→varchar(3) runes", StringValue("äöüß"), String, VarChar(3), "äöü"},
		{"str→char(5) pads", StringValue("ab"), String, Char(5), "ab   "},
		{"str→char(2) truncates", StringValue("abc"), String, Char(2), "ab"},
		{"bytes→str", BytesValue([]byte("hé")), Bytes, String, "hé"},
		{"bad utf8 bytes→str", BytesValue([]byte{'a', 0xff}), Bytes, String, "a\uFFFD"},
		{"str→bytes", StringValue("hi"), String, Bytes, "x'6869'"},
		{"bytes→binary(3) pads", BytesValue([]byte{1}), Bytes, Type{Kind: KindBinary, Precision: 3}, "x'010000'"},
		{"bytes→varbinary(1)", BytesValue([]byte{1, 2}), Bytes, Type{Kind: KindVarBinary, Precision: 1}, "x'01'"},
		{"int→bytes", Int32Value(1), Int, Bytes, errV},
		// dates and times
		{"str→date", StringValue("2020-04-15"), String, Date, "2020-04-15"},
		{"str ts→date", StringValue("2020-04-15 23:59:59"), String, Date, "2020-04-15"},
		{"str→date bad", StringValue("2020-02-30"), String, Date, errV},
		{"str→time", StringValue("08:05:00.123456"), String, Time(3), "08:05:00.123"},
		{"str→ts", StringValue("2020-04-15 08:05:00.123456"), String, Timestamp(3), "2020-04-15 08:05:00.123"},
		{"str iso→ts", StringValue("2020-04-15T08:05:00+02:00"), String, Timestamp(0), "2020-04-15 06:05:00"},
		{"str→ts bad", StringValue("yesterday"), String, Timestamp(3), errV},
		{"ts→date", TimestampValue(-1), Timestamp(6), Date, "1969-12-31"},
		{"ts→time", TimestampValue(ts), Timestamp(6), Time(0), "08:05:00"},
		{"date→ts", DateValue(18367), Date, Timestamp(3), "2020-04-15 00:00:00.000"},
		{"ts(6)→ts(3)", TimestampValue(ts), Timestamp(6), Timestamp(3), "2020-04-15 08:05:00.123"},
		{"ts→ltz", TimestampValue(ts), Timestamp(3), TimestampLTZ(3), "2020-04-15 08:05:00.123"},
		{"ltz→ts", TimestampLTZValue(ts), TimestampLTZ(3), Timestamp(3), "2020-04-15 08:05:00.123"},
		{"seconds→ltz", BigIntValue(1586937900), BigInt, TimestampLTZ(0), "2020-04-15 08:05:00"},
		{"decimal seconds→ltz", DecimalValue(15869379005, 1), Decimal(11, 1), TimestampLTZ(3), "2020-04-15 08:05:00.500"},
		{"int→ts", Int32Value(1), Int, Timestamp(3), errV},
		{"date→int", DateValue(1), Date, Int, errV},
		{"interval same", IntervalYearMonthValue(3), IntervalYM, IntervalYM, "+0-03"},
		// collections
		{"array<int>→array<string>", ArrayValue([]Value{Int32Value(1), NullValue}), ArrayOf(Int), ArrayOf(String), "[1, NULL]"},
		{"array<string>→array<int> bad", ArrayValue([]Value{StringValue("x")}), ArrayOf(String), ArrayOf(Int), errV},
		{"map", NewMapValue(&MapValue{Keys: []Value{StringValue("1")}, Values: []Value{Int32Value(2)}}),
			MapOf(String, Int), MapOf(Int, Double), "{1=2.0}"},
		{"row", RowValue([]Value{Int32Value(1), StringValue("2.5")}), RowOf(Field{"a", Int}, Field{"b", String}),
			RowOf(Field{"a", BigInt}, Field{"b", Decimal(3, 1)}), "(1, 2.5)"},
		{"row arity", RowValue([]Value{Int32Value(1)}), RowOf(Field{"a", Int}), RowOf(Field{"a", Int}, Field{"b", Int}), errV},
		{"array→string", ArrayValue([]Value{Int32Value(1), Int32Value(2)}), ArrayOf(Int), String, "[1, 2]"},
	}
	for _, tc := range tests {
		got, err := Cast(tc.v, tc.from, tc.to)
		var gs string
		switch {
		case err != nil:
			gs = errV
		default:
			gs = FormatValue(got, tc.to)
			if !got.IsNull() && got.Kind() != tc.to.Kind {
				t.Errorf("%s: result kind %s, want %s", tc.name, got.Kind(), tc.to.Kind)
			}
		}
		if gs != tc.want {
			t.Errorf("%s: Cast(%s → %s) = %q (err %v), want %q", tc.name, tc.from, tc.to, gs, err, tc.want)
		}
	}
}

func TestCastErrorMessage(t *testing.T) {
	_, err := Cast(StringValue("abc"), String, Int)
	if err == nil || err.Error() != "cannot cast 'abc' to INT: invalid number" {
		t.Errorf("err = %v", err)
	}
	_, err = Cast(BigIntValue(300), BigInt, TinyInt)
	if err == nil || err.Error() != "cannot cast 300 of type BIGINT to TINYINT: out of range" {
		t.Errorf("err = %v", err)
	}
}

func TestCastZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	wall, _ := ParseTimestamp("2020-04-15 08:05:00")
	ltz, err := CastIn(TimestampValue(wall), Timestamp(0), TimestampLTZ(0), berlin)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatTimestamp(ltz.Int(), 0); got != "2020-04-15 06:05:00" {
		t.Errorf("TIMESTAMP→LTZ in Berlin = %s UTC", got)
	}
	back, _ := CastIn(ltz, TimestampLTZ(0), Timestamp(0), berlin)
	if back.Int() != wall {
		t.Errorf("LTZ→TIMESTAMP = %d, want %d", back.Int(), wall)
	}
	s, _ := CastIn(ltz, TimestampLTZ(0), String, berlin)
	if s.Str() != "2020-04-15 08:05:00" {
		t.Errorf("LTZ→STRING in Berlin = %q", s.Str())
	}
	v, _ := CastIn(StringValue("2020-04-15 08:05:00"), String, TimestampLTZ(0), berlin)
	if v.Int() != ltz.Int() {
		t.Errorf("STRING→LTZ in Berlin = %d, want %d", v.Int(), ltz.Int())
	}
	v, _ = CastIn(StringValue("2020-04-15T08:05:00Z"), String, TimestampLTZ(0), berlin)
	if v.Int() != wall {
		t.Errorf("zoned STRING→LTZ = %d, want %d", v.Int(), wall)
	}
}

func TestAssignable(t *testing.T) {
	tests := []struct {
		from, to Type
		want     bool
	}{
		{Null, Int, true},
		{Int, BigInt, true},
		{BigInt, Int, false},
		{Int, Decimal(5, 2), true},
		{Decimal(10, 2), Double, true},
		{Double, Decimal(10, 2), false},
		{Double, Int, false},
		{VarChar(10), VarChar(5), true},
		{Char(3), String, true},
		{String, Int, false},
		{Date, Timestamp(3), true},
		{Timestamp(3), Date, false},
		{Timestamp(6), TimestampLTZ(3), true},
		{ArrayOf(Int), ArrayOf(BigInt), true},
		{ArrayOf(String), ArrayOf(Int), false},
		{MapOf(String, Int), MapOf(String, Double), true},
		{RowOf(Field{"a", Int}), RowOf(Field{"b", BigInt}), true},
		{RowOf(Field{"a", Int}), RowOf(Field{"a", Int}, Field{"b", Int}), false},
		{Boolean, Boolean, true},
		{Boolean, Int, false},
		{IntervalDT, IntervalYM, false},
	}
	for _, tc := range tests {
		if got := Assignable(tc.from, tc.to); got != tc.want {
			t.Errorf("Assignable(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestCommonType(t *testing.T) {
	nn := func(t Type) Type { return t.WithNullable(false) }
	tests := []struct {
		a, b Type
		want Type
		ok   bool
	}{
		{Int, BigInt, BigInt, true},
		{TinyInt, SmallInt, SmallInt, true},
		{Int, Decimal(10, 2), Decimal(12, 2), true},
		{BigInt, Decimal(38, 2), Decimal(38, 2), true},
		{Decimal(5, 2), Decimal(7, 4), Decimal(7, 4), true},
		{Decimal(10, 2), Double, Double, true},
		{Int, Float, Float, true},
		{Decimal(10, 2), Float, Double, true},
		{VarChar(3), VarChar(5), VarChar(5), true},
		{Char(3), VarChar(2), VarChar(3), true},
		{Char(3), Char(5), VarChar(5), true}, // Flink: a ragged CHAR union is varying
		{Char(3), Char(3), Char(3), true},
		{Null, nn(Int), Int, true},
		{nn(Int), nn(BigInt), nn(BigInt), true},
		{nn(Int), BigInt, BigInt, true},
		{Timestamp(0), Timestamp(3), Timestamp(3), true},
		{Date, Timestamp(3), Timestamp(3), true},
		{Timestamp(3), TimestampLTZ(6), TimestampLTZ(6), true},
		{Time(0), Time(3), Time(3), true},
		{ArrayOf(Int), ArrayOf(Double), ArrayOf(Double), true},
		{MapOf(String, Int), MapOf(VarChar(3), BigInt), MapOf(String, BigInt), true},
		{Int, String, Type{}, false},
		{Boolean, Int, Type{}, false},
		{Date, Time(0), Type{}, false},
		{Boolean, Boolean, Boolean, true},
		{Timestamp(3).WithNullable(false), nn(Timestamp(3)), nn(Timestamp(3)), true},
	}
	for _, tc := range tests {
		got, ok := CommonType(tc.a, tc.b)
		if ok != tc.ok || (ok && !got.Equal(tc.want)) {
			t.Errorf("CommonType(%s, %s) = %s, %v; want %s, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
	rowtime := Timestamp(3)
	rowtime.TimeAttr = RowTime
	if got, _ := CommonType(rowtime, Timestamp(3)); got.TimeAttr != NoTimeAttr {
		t.Errorf("CommonType kept the time attribute: %s", got)
	}
}
