package types

import (
	"math"
	"testing"
	"time"
)

func TestAppendJavaFloat(t *testing.T) {
	tests := []struct {
		f    float64
		bits int
		want string
	}{
		{1.5, 64, "1.5"},
		{100, 64, "100.0"},
		{1e10, 64, "1.0E10"},
		{1.234e-5, 64, "1.234E-5"},
		{0.001, 64, "0.001"},
		{0.0001, 64, "1.0E-4"},
		{9999999, 64, "9999999.0"},
		{1e7, 64, "1.0E7"},
		{12345678.9, 64, "1.23456789E7"},
		{0.1, 64, "0.1"},
		{-2.5, 64, "-2.5"},
		{0.30000000000000004, 64, "0.30000000000000004"},
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{math.NaN(), 64, "NaN"},
		{math.Inf(1), 64, "Infinity"},
		{math.Inf(-1), 64, "-Infinity"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(3.4e38)), 32, "3.4E38"},
		{123.25, 64, "123.25"},
	}
	for _, tc := range tests {
		if got := string(AppendJavaFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("AppendJavaFloat(%v, %d) = %q, want %q", tc.f, tc.bits, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	ts := int64(18367)*MicrosPerDay + 8*MicrosPerHour + 5*MicrosPerMinute
	tests := []struct {
		v    Value
		t    Type
		want string
	}{
		{NullValue, Int, "NULL"},
		{BoolValue(true), Boolean, "TRUE"},
		{BoolValue(false), Boolean, "FALSE"},
		{Int32Value(-42), Int, "-42"},
		{IntValue(KindTinyInt, 7), TinyInt, "7"},
		{DoubleValue(1e10), Double, "1.0E10"},
		{FloatValue(1.5), Float, "1.5"},
		{DecimalValue(1230, 2), Decimal(10, 2), "12.30"},
		{StringValue("abc"), String, "abc"},
		{CharValue("ab "), Char(3), "ab "},
		{BytesValue([]byte{0x0a, 0x0b}), Bytes, "x'0a0b'"},
		{DateValue(18367), Date, "2020-04-15"},
		{TimeValue(8*MicrosPerHour + 5*MicrosPerMinute), Time(0), "08:05:00"},
		{TimestampValue(ts), Timestamp(3), "2020-04-15 08:05:00.000"},
		{TimestampValue(ts), Timestamp(0), "2020-04-15 08:05:00"},
		{TimestampLTZValue(ts), TimestampLTZ(3), "2020-04-15 08:05:00.000"},
		{IntervalDayTimeValue(10 * MicrosPerDay), IntervalDT, "+10 00:00:00.000"},
		{IntervalDayTimeValue(-(90*MicrosPerMinute + 500*MicrosPerMilli)), IntervalDT, "-0 01:30:00.500"},
		{IntervalYearMonthValue(18), IntervalYM, "+1-06"},
		{IntervalYearMonthValue(-3), IntervalYM, "-0-03"},
		{ArrayValue([]Value{Int32Value(1), NullValue, Int32Value(2)}), ArrayOf(Int), "[1, NULL, 2]"},
		{ArrayValue(nil), ArrayOf(Int), "[]"},
		{NewMapValue(&MapValue{Keys: []Value{StringValue("a"), StringValue("b")}, Values: []Value{Int32Value(1), Int32Value(2)}}),
			MapOf(String, Int), "{a=1, b=2}"},
		{RowValue([]Value{Int32Value(1), StringValue("abc")}), RowOf(Field{"a", Int}, Field{"b", String}), "(1, abc)"},
		{RowValue([]Value{RowValue([]Value{BoolValue(true)}), ArrayValue([]Value{DecimalValue(5, 1)})}),
			RowOf(Field{"r", RowOf(Field{"x", Boolean})}, Field{"a", ArrayOf(Decimal(2, 1))}), "((TRUE), [0.5])"},
		{MultisetValue([]Value{StringValue("a"), StringValue("b"), StringValue("a")}), Type{Kind: KindMultiset, Elem: &String}, "{a=2, b=1}"},
	}
	for _, tc := range tests {
		if got := FormatValue(tc.v, tc.t); got != tc.want {
			t.Errorf("FormatValue(%s) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestAppendValueInZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	v := TimestampLTZValue(0)
	if got := string(AppendValueIn(nil, v, TimestampLTZ(3), tokyo)); got != "1970-01-01 09:00:00.000" {
		t.Errorf("got %q", got)
	}
}

func BenchmarkAppendValueDouble(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	v := DoubleValue(12345.678)
	for b.Loop() {
		buf = AppendValue(buf[:0], v, Double)
	}
}
