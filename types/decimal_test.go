package types

import (
	"errors"
	"testing"
)

func mustDec(t testing.TB, s string) Value {
	t.Helper()
	v, err := ParseDecimal(s)
	if err != nil {
		t.Fatalf("ParseDecimal(%q): %v", s, err)
	}
	return v
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in    string
		want  string
		scale int
		prec  int
	}{
		{"12.30", "12.30", 2, 4},
		{"0.05", "0.05", 2, 2},
		{"-0.05", "-0.05", 2, 2},
		{"+7", "7", 0, 1},
		{".5", "0.5", 1, 1},
		{"5.", "5", 0, 1},
		{"1.5E3", "1500", 0, 4},
		{"1.5e-3", "0.0015", 4, 4},
		{"123456789012345678901234567890.12", "123456789012345678901234567890.12", 2, 32},
		{"-99999999999999999999", "-99999999999999999999", 0, 20},
		{"9223372036854775807", "9223372036854775807", 0, 19},
		{"9223372036854775808", "9223372036854775808", 0, 19},
		{"0", "0", 0, 1},
		{"0.000", "0.000", 3, 3},
	}
	for _, tc := range tests {
		v, err := ParseDecimal(tc.in)
		if err != nil {
			t.Errorf("ParseDecimal(%q): %v", tc.in, err)
			continue
		}
		if got := DecimalString(v); got != tc.want || v.Scale() != tc.scale {
			t.Errorf("ParseDecimal(%q) = %s scale %d, want %s scale %d", tc.in, got, v.Scale(), tc.want, tc.scale)
		}
		if got := DecimalPrecision(v); got != tc.prec {
			t.Errorf("DecimalPrecision(%q) = %d, want %d", tc.in, got, tc.prec)
		}
	}
	for _, bad := range []string{"", "-", ".", "1.2.3", "abc", "1e", "1x", " 1", "1e5000"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q): want error", bad)
		}
	}
}

func TestDecimalTypes(t *testing.T) {
	tests := []struct {
		name string
		got  Type
		want Type
	}{
		{"add", DecimalAddType(Decimal(10, 2), Decimal(5, 3)), Decimal(12, 3)},
		{"add-int", DecimalAddType(Decimal(10, 0), Decimal(10, 2)), Decimal(13, 2)},
		{"add-cap", DecimalAddType(Decimal(38, 2), Decimal(38, 2)), Decimal(38, 2)},
		{"mul", DecimalMulType(Decimal(10, 2), Decimal(5, 3)), Decimal(15, 5)},
		{"mul-cap", DecimalMulType(Decimal(38, 10), Decimal(38, 10)), Decimal(38, 6)},
		{"mul-cap-small-scale", DecimalMulType(Decimal(30, 2), Decimal(20, 2)), Decimal(38, 4)},
		// s = max(6, 2+5+1) = 8, p = 10-2+3+8 = 19
		{"div", DecimalDivType(Decimal(10, 2), Decimal(5, 3)), Decimal(19, 8)},
		// s = max(6, 0+10+1) = 11, p = 10-0+0+11 = 21
		{"div-int", DecimalDivType(Decimal(10, 0), Decimal(10, 0)), Decimal(21, 11)},
		// s = 2+38+1 = 41, p = 38-2+2+41 = 79 → int digits 38 → scale max(0, 6) = 6
		{"div-cap", DecimalDivType(Decimal(38, 2), Decimal(38, 2)), Decimal(38, 6)},
		{"mod", DecimalModType(Decimal(10, 2), Decimal(5, 3)), Decimal(5, 3)},
	}
	for _, tc := range tests {
		if !tc.got.Equal(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	if d, ok := DecimalTypeOf(Int); !ok || !d.Equal(Decimal(10, 0)) {
		t.Errorf("DecimalTypeOf(INT) = %s", d)
	}
	if d, ok := DecimalTypeOf(BigInt); !ok || !d.Equal(Decimal(19, 0)) {
		t.Errorf("DecimalTypeOf(BIGINT) = %s", d)
	}
	if _, ok := DecimalTypeOf(Double); ok {
		t.Errorf("DecimalTypeOf(DOUBLE) ok")
	}
}

func TestDecimalArithmetic(t *testing.T) {
	type op func(a, b Value, p, s int) (Value, error)
	add, sub, mul, div, mod := op(DecimalAdd), op(DecimalSub), op(DecimalMul), op(DecimalDiv), op(DecimalMod)
	tests := []struct {
		name string
		f    op
		a, b string
		p, s int
		want string // "NULL" for overflow
	}{
		{"0.1+0.2", add, "0.1", "0.2", 2, 1, "0.3"},
		{"1.5+2.25", add, "1.5", "2.25", 4, 2, "3.75"},
		{"-1.5+1.5", add, "-1.5", "1.5", 3, 1, "0.0"},
		{"add-overflow", add, "99.9", "0.1", 3, 1, "NULL"},
		{"add-fits", add, "99.9", "0.1", 4, 1, "100.0"},
		{"add-big", add, "9223372036854775807", "1", 20, 0, "9223372036854775808"},
		{"add-big-neg", add, "-9223372036854775807", "-2", 20, 0, "-9223372036854775809"},
		{"add-mixed", add, "1.5", "2.25", 4, 2, "3.75"},
		{"add-int", add, "7", "-0.25", 13, 2, "6.75"},
		{"sub-mixed", sub, "0.5", "12.345", 6, 3, "-11.845"},
		{"add-rescale-overflow", add, "9223372036854775807", "0.5", 22, 1, "9223372036854775807.5"},
		{"add-38", add, "99999999999999999999999999999999999999", "1", 38, 0, "NULL"},
		{"sub", sub, "1.00", "0.015", 5, 3, "0.985"},
		{"sub-neg", sub, "0.1", "0.25", 4, 2, "-0.15"},
		{"sub-big", sub, "-9223372036854775807", "2", 20, 0, "-9223372036854775809"},
		{"1.00*2.5", mul, "1.00", "2.5", 5, 3, "2.500"},
		{"mul-neg", mul, "-1.5", "1.5", 4, 2, "-2.25"},
		{"mul-round", mul, "1.25", "0.5", 10, 2, "0.63"},       // 0.625 HALF_UP
		{"mul-round-neg", mul, "-1.25", "0.5", 10, 2, "-0.63"}, // away from zero
		{"mul-overflow", mul, "99", "99", 3, 0, "NULL"},
		{"mul-big", mul, "10000000000", "10000000000", 21, 0, "100000000000000000000"},
		{"1/3", div, "1", "3", 21, 11, "0.33333333333"},
		{"2/3", div, "2", "3", 21, 11, "0.66666666667"},
		{"-2/3", div, "-2", "3", 21, 11, "-0.66666666667"},
		{"10.00/4", div, "10.00", "4", 19, 8, "2.50000000"},
		{"div-big", div, "123456789012345678901234567890", "3", 38, 6, "41152263004115226300411522630.000000"},
		{"div-overflow", div, "100", "0.01", 4, 0, "NULL"},
		{"mod", mod, "7.5", "2", 3, 1, "1.5"},
		{"mod-neg", mod, "-7.5", "2", 3, 1, "-1.5"},
		{"mod-mixed-scale", mod, "10", "0.3", 3, 1, "0.1"},
	}
	for _, tc := range tests {
		got, err := tc.f(mustDec(t, tc.a), mustDec(t, tc.b), tc.p, tc.s)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var gs string
		if got.IsNull() {
			gs = "NULL"
		} else {
			gs = DecimalString(got)
			if got.Scale() != tc.s {
				t.Errorf("%s: scale %d, want %d", tc.name, got.Scale(), tc.s)
			}
		}
		if gs != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, gs, tc.want)
		}
	}
	if _, err := DecimalDiv(mustDec(t, "1.0"), mustDec(t, "0.00"), 10, 6); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("1.0/0: err = %v", err)
	}
	if _, err := DecimalMod(mustDec(t, "1.0"), mustDec(t, "0"), 10, 1); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("MOD(1.0, 0): err = %v", err)
	}
	// Integers are accepted as scale-0 operands.
	if got, _ := DecimalAdd(Int32Value(2), mustDec(t, "0.50"), 13, 2); DecimalString(got) != "2.50" {
		t.Errorf("2 + 0.50 = %s", DecimalString(got))
	}
}

func TestRescale(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  string
	}{
		{"1.25", 1, "1.3"},
		{"1.24", 1, "1.2"},
		{"-1.25", 1, "-1.3"},
		{"1.5", 0, "2"},
		{"-0.5", 0, "-1"},
		{"1.5", 3, "1.500"},
		{"0.49999", 0, "0"},
		{"123456789012345678901234567890.5", 0, "123456789012345678901234567891"},
		{"9.9", 18, "9.900000000000000000"},
		{"9.9", 20, "9.90000000000000000000"},
		{"5000000000000000000", 0, "5000000000000000000"},
	}
	for _, tc := range tests {
		got := Rescale(mustDec(t, tc.in), tc.scale)
		if DecimalString(got) != tc.want || got.Scale() != tc.scale {
			t.Errorf("Rescale(%s, %d) = %s (scale %d), want %s", tc.in, tc.scale, DecimalString(got), got.Scale(), tc.want)
		}
	}
	// 5e18 at scale 19 is 0.5: rounds to 1.
	if got := Rescale(DecimalValue(5e18, 19), 0); DecimalString(got) != "1" {
		t.Errorf("Rescale(0.5 at scale 19) = %s", DecimalString(got))
	}
}

func TestFitDecimal(t *testing.T) {
	tests := []struct {
		in   string
		p, s int
		want string
	}{
		{"123.456", 5, 2, "123.46"},
		{"999.995", 5, 2, "NULL"},
		{"999.994", 5, 2, "999.99"},
		{"-12.5", 2, 0, "-13"},
		{"12345", 4, 0, "NULL"},
		{"0.001", 2, 2, "0.00"},
		{"123456789012345678901234567890", 38, 9, "NULL"},
		{"123456789012345678901234567890", 38, 5, "123456789012345678901234567890.00000"},
	}
	for _, tc := range tests {
		got, ok := FitDecimal(mustDec(t, tc.in), tc.p, tc.s)
		gs := "NULL"
		if ok {
			gs = DecimalString(got)
		}
		if gs != tc.want {
			t.Errorf("FitDecimal(%s, %d, %d) = %s, want %s", tc.in, tc.p, tc.s, gs, tc.want)
		}
	}
}

func TestDecimalFromFloat(t *testing.T) {
	tests := []struct {
		f    float64
		p, s int
		want string
	}{
		{0.1, 10, 2, "0.10"},
		{1.005, 10, 2, "1.01"}, // BigDecimal.valueOf(1.005) is exactly 1.005
		{-2.5, 10, 0, "-3"},
		{1e20, 38, 0, "100000000000000000000"},
		{1e-20, 10, 5, "0.00000"},
		{123.456, 3, 1, "NULL"},
	}
	for _, tc := range tests {
		got, ok := DecimalFromFloat(tc.f, tc.p, tc.s)
		gs := "NULL"
		if ok {
			gs = DecimalString(got)
		}
		if gs != tc.want {
			t.Errorf("DecimalFromFloat(%v, %d, %d) = %s, want %s", tc.f, tc.p, tc.s, gs, tc.want)
		}
	}
}

func TestDecimalNegSign(t *testing.T) {
	if got := DecimalString(DecimalNeg(mustDec(t, "1.50"))); got != "-1.50" {
		t.Errorf("neg = %s", got)
	}
	if DecimalSign(mustDec(t, "-0.01")) != -1 || DecimalSign(mustDec(t, "0.00")) != 0 ||
		DecimalSign(mustDec(t, "123456789012345678901234567890")) != 1 {
		t.Errorf("DecimalSign wrong")
	}
}

func BenchmarkDecimalAdd(b *testing.B) {
	x, y := DecimalValue(12345, 2), DecimalValue(678, 2)
	b.ReportAllocs()
	var r Value
	for b.Loop() {
		r, _ = DecimalAdd(x, y, 12, 2)
	}
	_ = r
}

func BenchmarkDecimalMul(b *testing.B) {
	x, y := DecimalValue(12345, 2), DecimalValue(678, 2)
	b.ReportAllocs()
	var r Value
	for b.Loop() {
		r, _ = DecimalMul(x, y, 20, 4)
	}
	_ = r
}

func BenchmarkDecimalDiv(b *testing.B) {
	x, y := DecimalValue(12345, 2), DecimalValue(678, 2)
	b.ReportAllocs()
	var r Value
	for b.Loop() {
		r, _ = DecimalDiv(x, y, 19, 8)
	}
	_ = r
}

func TestDecimalAddNoAlloc(t *testing.T) {
	x, y := DecimalValue(12345, 2), DecimalValue(678, 2)
	n := testing.AllocsPerRun(100, func() { _, _ = DecimalAdd(x, y, 12, 2) })
	if n != 0 {
		t.Errorf("DecimalAdd allocates %v per call", n)
	}
	// Mixed scales and integer operands align without allocating.
	z := Int32Value(3)
	n = testing.AllocsPerRun(100, func() {
		_, _ = DecimalAdd(x, z, 13, 2)
		_, _ = DecimalSub(DecimalValue(5, 1), x, 13, 2)
	})
	if n != 0 {
		t.Errorf("DecimalAdd with mixed scales allocates %v per call", n)
	}
}

func TestCompareDecimal(t *testing.T) {
	tests := []struct {
		a, b Value
		want int
	}{
		{DecimalValue(100, 2), Int32Value(1), 0},
		{DecimalValue(101, 2), Int32Value(1), 1},
		{DecimalValue(-5, 1), DecimalValue(-50, 2), 0},
		{DecimalValue(-5, 1), DecimalValue(-49, 2), -1},
		{mustDec(t, "123456789012345678901234567890"), BigIntValue(1), 1},
		{BigIntValue(9223372036854775807), DecimalValue(1, 1), 1},
	}
	for _, tc := range tests {
		if got := CompareDecimal(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareDecimal(%s, %s) = %d, want %d", FormatValue(tc.a, Type{}), FormatValue(tc.b, Type{}), got, tc.want)
		}
	}
	a, b := DecimalValue(12345, 2), Int32Value(10)
	if n := testing.AllocsPerRun(100, func() { CompareDecimal(a, b) }); n != 0 {
		t.Errorf("CompareDecimal allocates %v", n)
	}
}

func TestRound(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		mode RoundingMode
		want string
	}{
		{"2.675", 2, RoundHalfUp, "2.68"},
		{"-2.675", 2, RoundHalfUp, "-2.68"},
		{"2.674", 2, RoundHalfUp, "2.67"},
		{"1249.5", -2, RoundHalfUp, "1200"},
		{"1250", -2, RoundHalfUp, "1300"},
		{"-1250", -2, RoundHalfUp, "-1300"},
		{"1.5", 3, RoundHalfUp, "1.500"},
		{"2.9", 0, RoundDown, "2"},
		{"-2.9", 0, RoundDown, "-2"},
		{"-2.1", 0, RoundFloor, "-3"},
		{"2.1", 0, RoundFloor, "2"},
		{"2.1", 0, RoundCeiling, "3"},
		{"-2.9", 0, RoundCeiling, "-2"},
		{"123456789012345678901234567890.55", 1, RoundHalfUp, "123456789012345678901234567890.6"},
		{"123456789012345678901234567890.55", 0, RoundFloor, "123456789012345678901234567890"},
		{"5", -1, RoundHalfUp, "10"},
	}
	for _, tc := range tests {
		got := Round(mustDec(t, tc.in), tc.n, tc.mode)
		if DecimalString(got) != tc.want {
			t.Errorf("Round(%s, %d, %d) = %s, want %s", tc.in, tc.n, tc.mode, DecimalString(got), tc.want)
		}
	}
}
