package types

import "testing"

// FuzzParseDecimal checks that parsing never panics and that a parsed value
// prints and reparses to the same value and scale.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"12.30", "-0.5", "1e3", "1.5E-3", "99999999999999999999999.1", ".", "-", "1e-38"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDecimal(s)
		if err != nil {
			return
		}
		out := DecimalString(v)
		w, err := ParseDecimal(out)
		if err != nil {
			t.Fatalf("ParseDecimal(%q) printed %q, which does not parse: %v", s, out, err)
		}
		if CompareDecimal(v, w) != 0 || v.Scale() != w.Scale() {
			t.Fatalf("ParseDecimal(%q) = %s, reparsed as %s", s, out, DecimalString(w))
		}
	})
}

// FuzzParseTimestamp checks that parsing never panics and that a parsed
// timestamp prints and reparses to the same instant.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2020-04-15 08:05:00.123", "2020-04-15T08:05:00Z", "1969-12-31", "2020-02-30", "0001-01-01 00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		out := FormatTimestamp(m, 6)
		m2, err := ParseTimestamp(out)
		if err != nil || m2 != m {
			t.Fatalf("ParseTimestamp(%q) = %d printed %q reparsed %d, %v", s, m, out, m2, err)
		}
	})
}

// FuzzCastString casts arbitrary strings to every scalar type: it must
// never panic, and a successful cast to a number must print and cast back
// to the same value.
func FuzzCastString(f *testing.F) {
	for _, s := range []string{"42", " -7.5 ", "1e400", "true", "2020-04-15", "NaN", "9223372036854775808"} {
		f.Add(s)
	}
	targets := []Type{Boolean, TinyInt, Int, BigInt, Float, Double, Decimal(10, 2), Decimal(38, 0), Char(3),
		VarChar(2), Bytes, Date, Time(3), Timestamp(3), TimestampLTZ(3)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, to := range targets {
			v, err := Cast(StringValue(s), String, to)
			if err != nil || v.IsNull() || !to.Kind.IsNumeric() {
				continue
			}
			back, err := Cast(v, to, String)
			if err != nil {
				t.Fatalf("Cast(%q → %s) = %s does not cast back: %v", s, to, FormatValue(v, to), err)
			}
			again, err := Cast(back, String, to)
			if err != nil || Compare(again, v) != 0 && !(to.Kind == KindDouble || to.Kind == KindFloat) {
				t.Fatalf("Cast(%q → %s) = %s, round trip %s", s, to, FormatValue(v, to), FormatValue(again, to))
			}
		}
	})
}
