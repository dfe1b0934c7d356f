package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

func TestStringFunctions(t *testing.T) {
	k := newKit()
	c := k.call
	trim := func(mode, chars string, s Node) Node { return c("TRIM", S(mode), S(chars), s) }
	cases := []exprCase{
		{c("CHAR_LENGTH", col("s")), "5"},
		{c("CHARACTER_LENGTH", col("u")), "9"},
		{c("CHAR_LENGTH", col("ns")), "NULL"},
		{c("CHAR_LENGTH", col("i")), "BIND ERROR: cannot apply 'CHAR_LENGTH' to (INT): expected (STRING)"},
		{c("UPPER", col("u")), "GRÜSSE, 世界"},
		{c("LOWER", S("ABC")), "abc"},
		{trim("BOTH", " ", S("  ab  ")), "ab"},
		{trim("LEADING", " ", S("  ab  ")), "ab  "},
		{trim("TRAILING", " ", S("  ab  ")), "  ab"},
		{trim("BOTH", "xy", S("xyaxbyx")), "axb"},
		{c("TRIM", S("SIDEWAYS"), S(" "), col("s")), "BIND ERROR: cannot apply 'TRIM': mode must be BOTH, LEADING or TRAILING, not 'SIDEWAYS'"},
		{c("LTRIM", S("  a ")), "a "},
		{c("RTRIM", S("  a ")), "  a"},
		{c("RTRIM", S("axx"), S("x")), "a"},
		// SUBSTRING: 1-based; negative start counts from the end; 0 is 1.
		{c("SUBSTRING", col("s"), I(2)), "ello"},
		{c("SUBSTRING", col("s"), I(2), I(3)), "ell"},
		{c("SUBSTRING", col("s"), I(0), I(2)), "he"},
		{c("SUBSTRING", col("s"), I(-3)), "llo"},
		{c("SUBSTRING", col("s"), I(-3), I(2)), "ll"},
		{c("SUBSTRING", col("s"), I(-9), I(2)), ""},
		{c("SUBSTRING", col("s"), I(9)), ""},
		{c("SUBSTRING", col("s"), I(2), I(-1)), "NULL"},
		{c("SUBSTR", col("u"), I(6), I(4)), ", 世界"},
		{c("CONCAT", col("s"), S(" "), S("world")), "hello world"},
		{c("CONCAT", col("s"), col("ns")), "NULL"},
		{c("||", col("s"), S("!")), "hello!"},
		{c("||", col("ns"), S("!")), "NULL"},
		{c("CONCAT_WS", S("-"), S("a"), col("ns"), S("b")), "a-b"},
		{c("CONCAT_WS", col("ns"), S("a")), "NULL"},
		{c("REPLACE", col("s"), S("l"), S("L")), "heLLo"},
		{c("REPLACE", S("abc"), S(""), S("x")), "xaxbxcx"},
		{c("POSITION", S("ll"), col("s")), "3"},
		{c("POSITION", S("z"), col("s")), "0"},
		{c("POSITION", S("世"), col("u")), "8"},
		{c("LOCATE", S("l"), col("s")), "3"},
		{c("LOCATE", S("l"), col("s"), I(4)), "4"},
		{c("LOCATE", S("l"), col("s"), I(5)), "0"},
		{c("INSTR", col("s"), S("l")), "3"},
		{c("INSTR", col("s"), S("l"), I(1), I(2)), "4"},
		{c("INSTR", col("s"), S("l"), I(-1), I(1)), "4"},
		{c("INSTR", col("s"), S("x")), "0"},
		{c("LPAD", S("hi"), I(5), S("??")), "???hi"},
		{c("LPAD", S("hi"), I(1), S("??")), "h"},
		{c("RPAD", S("hi"), I(5), S("ab")), "hiaba"},
		{c("RPAD", S("hi"), I(-1), S("ab")), "NULL"},
		{c("LPAD", S("hi"), I(4), S("")), "NULL"},
		{c("SPLIT_INDEX", S("a,b,,c"), S(","), I(1)), "b"},
		{c("SPLIT_INDEX", S("a,b,,c"), S(","), I(2)), ""},
		{c("SPLIT_INDEX", S("a,b,,c"), S(","), I(4)), "NULL"},
		{c("SPLIT_INDEX", S("a,b"), S(","), I(-1)), "NULL"},
		{c("SPLIT_INDEX", S("a::b"), S("::"), I(1)), "b"},
		{c("SPLIT_INDEX", S("a,b,,c"), S(","), I(0)), "a"},
		{c("SPLIT_INDEX", S("a,b,,c"), S(","), I(3)), "c"},
		{c("SPLIT_INDEX", S("a,b,"), S(","), I(2)), ""},
		{c("SPLIT_INDEX", S("abc"), S(","), I(0)), "abc"},
		{c("SPLIT_INDEX", S("abc"), S(","), I(1)), "NULL"},
		{c("SPLIT_INDEX", S("aaa"), S("aa"), I(1)), "a"},
		{c("SPLIT_INDEX", col("s"), S("l"), I(1)), ""},
		{c("SPLIT_INDEX", col("s"), S("l"), I(2)), "o"},
		{c("SPLIT_INDEX", col("s"), S("l"), I(3)), "NULL"},
		{c("SPLIT_INDEX", col("ns"), S("l"), I(0)), "NULL"},
		{c("SPLIT_INDEX", col("s"), I(108), I(2)), "o"},
		{c("SPLIT_INDEX", col("s"), I(0), I(2)), "NULL"},
		{c("SPLIT_INDEX", col("s"), col("s"), I(1)), ""},
		{c("SPLIT_INDEX", col("s"), S("e"), col("i")), "NULL"},
		{c("SPLIT_INDEX", col("s"), S("e"), c("-", col("i"), I(6))), "llo"},
		{c("SPLIT_INDEX", col("s"), S("e"), col("n")), "NULL"},
		{c("SPLIT_INDEX", S("a,b"), I(44), I(1)), "b"},
		{c("REGEXP", col("s"), S("l+")), "TRUE"},
		{c("REGEXP", col("s"), S("^l")), "FALSE"},
		{c("REGEXP", col("s"), S("")), "FALSE"},
		{c("REGEXP", col("s"), S("(")), "COMPILE ERROR: cannot compile regular expression '(' in REGEXP: error parsing regexp: missing closing ): `(`"},
		{c("REGEXP", col("s"), col("ns")), "NULL"},
		{c("REGEXP_EXTRACT", S("foo=123, bar=456"), S("(\\w+)=(\\d+)"), I(2)), "123"},
		{c("REGEXP_EXTRACT", S("foo=123"), S("(\\w+)=(\\d+)")), "foo=123"},
		{c("REGEXP_EXTRACT", S("foo=123"), S("(\\w+)=(\\d+)"), I(3)), "NULL"},
		{c("REGEXP_EXTRACT", S("foo"), S("(\\d+)"), I(1)), "NULL"},
		{c("REGEXP_EXTRACT", S("ab"), S("(x)?b"), I(1)), "NULL"},
		{c("REGEXP_REPLACE", S("a1b22c"), S("\\d+"), S("#")), "a#b#c"},
		{c("REGEXP_REPLACE", S("a1"), S("(\\d)"), S("$1$1")), "a$1$1"}, // the replacement is literal, as in Flink
		{c("INITCAP", S("hello wORLD 2nd-try")), "Hello World 2nd-Try"},
		{c("REVERSE", col("u")), "界世 ,eßürG"},
		{c("REPEAT", S("ab"), I(3)), "ababab"},
		{c("REPEAT", S("ab"), I(-1)), ""},
		{c("LEFT", col("s"), I(2)), "he"},
		{c("LEFT", col("s"), I(-2)), ""},
		{c("LEFT", col("s"), I(10)), "hello"},
		{c("RIGHT", col("u"), I(2)), "世界"},
		{c("MD5", S("abc")), "900150983cd24fb0d6963f7d28e17f72"},
		{c("SHA1", S("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{c("SHA256", S("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{c("SHA2", S("abc"), I(224)), "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
		{c("TO_BASE64", S("hello")), "aGVsbG8="},
		{c("FROM_BASE64", S("aGVsbG8=")), "hello"},
		{c("FROM_BASE64", S("!!")), "ERROR: cannot evaluate FROM_BASE64('!!'): invalid base64 input: illegal base64 data at input byte 0"},
		{c("ASCII", S("A")), "65"},
		{c("ASCII", S("")), "0"},
		{c("CHR", I(65)), "A"},
		{c("CHR", I(321)), "A"}, // 321 & 0xFF = 65
		{c("CHR", I(-1)), ""},
		{c("OVERLAY", S("abcdef"), S("XY"), I(2)), "aXYdef"},
		{c("OVERLAY", S("abcdef"), S("XY"), I(2), I(1)), "aXYcdef"},
		{c("CHAR_LENGTH", c("UUID")), "36"},
		{c("UPPPER", col("s")), `BIND ERROR: unknown function 'UPPPER' (did you mean "UPPER"?)`},
	}
	runCases(t, cases, nil)
}

func TestNumericFunctions(t *testing.T) {
	k := newKit()
	c := k.call
	cases := []exprCase{
		{c("ABS", col("b")), "3"},
		{c("ABS", Dec("-1.50")), "1.50"},
		{c("ABS", F(-2.5)), "2.5"},
		{c("MOD", I(10), I(3)), "1"},
		{c("MOD", Dec("10.5"), I(3)), "1.5"},
		{c("POWER", I(2), I(10)), "1024.0"},
		{c("POW", F(4), F(0.5)), "2.0"},
		{c("SQRT", I(16)), "4.0"},
		{c("SQRT", I(-1)), "NaN"},
		{c("LN", c("E")), "1.0"},
		{c("LOG10", I(1000)), "3.0"},
		{c("LOG2", I(8)), "3.0"},
		{c("LOG", I(2), I(8)), "3.0"},
		{c("EXP", I(0)), "1.0"},
		{c("ROUND", Dec("2.675"), I(2)), "2.68"},
		{c("ROUND", Dec("-2.675"), I(2)), "-2.68"},
		{c("ROUND", Dec("12.345")), "12"},
		{c("ROUND", Dec("1249.5"), I(-2)), "1200"},
		{c("ROUND", Dec("9.99"), I(1)), "10.0"},
		{c("ROUND", F(2.675), I(2)), "2.68"}, // through the shortest decimal form, as Flink
		{c("ROUND", F(-0.5)), "-1.0"},
		{c("ROUND", I(125), I(-1)), "130"},
		{c("ROUND", I(7), I(2)), "7"},
		{c("ROUND", col("d"), I(1)), "12.3"},
		{c("TRUNCATE", Dec("2.679"), I(2)), "2.67"},
		{c("TRUNCATE", F(-2.679), I(1)), "-2.6"},
		{c("TRUNCATE", I(129), I(-1)), "120"},
		{c("FLOOR", Dec("-2.5")), "-3"},
		{c("CEIL", Dec("2.1")), "3"},
		{c("CEILING", F(2.1)), "3.0"},
		{c("FLOOR", I(5)), "5"},
		{c("SIGN", I(-5)), "-1"},
		{c("SIGN", Dec("2.50")), "1.00"},
		{c("SIGN", F(0)), "0.0"},
		{c("RAND", I(42)), "0.7275636800328681"}, // java.util.Random(42).nextDouble()
		{c("RAND_INTEGER", I(42), I(10)), "0"},   // java.util.Random(42).nextInt(10)
		{c("PI"), "3.141592653589793"},
		{c("DEGREES", c("PI")), "180.0"},
		{c("RADIANS", I(180)), "3.141592653589793"},
		{c("SIN", I(0)), "0.0"},
		{c("COS", I(0)), "1.0"},
		{c("TAN", I(0)), "0.0"},
		{c("ATAN2", I(1), I(1)), "0.7853981633974483"},
		// Digits that are no literal (a column, or -1, the negation of
		// the literal 1) keep a DECIMAL's type, as in Flink:
		// ROUND(42.324, -1) is 40.000.
		{c("ROUND", Dec("2.5"), col("i")), "2.5"},
		{c("ROUND", Dec("42.324"), c("NEG", I(1))), "40.000"},
		{c("TRUNCATE", Dec("42.324"), c("NEG", I(1))), "40.000"},
		{c("ROUND", Dec("45.324"), c("NEG", I(1))), "50.000"},
		{c("SQRT", col("s")), "BIND ERROR: cannot apply 'SQRT' to (STRING): expected (NUMERIC)"},
	}
	runCases(t, cases, nil)
	types := []struct {
		n    Node
		want string
	}{
		{c("ROUND", Dec("2.675"), I(2)), "DECIMAL(4, 2) NOT NULL"},
		{c("ROUND", Dec("1249.5"), I(-2)), "DECIMAL(5, 0) NOT NULL"},
		{c("ROUND", Dec("1.5"), I(3)), "DECIMAL(2, 1) NOT NULL"},
		{c("FLOOR", Dec("-2.5")), "DECIMAL(2, 0) NOT NULL"},
		{c("POWER", col("i"), I(2)), "DOUBLE NOT NULL"},
		{c("RAND"), "DOUBLE NOT NULL"},
	}
	for _, tc := range types {
		if got := tc.n.Type().String(); got != tc.want {
			t.Errorf("%s: type %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestRandSequence(t *testing.T) {
	// java.util.Random(42): nextDouble() gives 0.7275636800328681, then
	// 0.6832234717598454.
	r := newJavaRandom(42)
	if got := r.nextDouble(); got != 0.7275636800328681 {
		t.Errorf("first = %v", got)
	}
	if got := r.nextDouble(); got != 0.6832234717598454 {
		t.Errorf("second = %v", got)
	}
	// A seeded RAND gives the same sequence per compiled instance.
	k := newKit()
	n := k.call("RAND", I(7))
	e1, _ := Compile(n, nil)
	e2, _ := Compile(n, nil)
	for i := 0; i < 3; i++ {
		a, _ := e1(nil)
		b, _ := e2(nil)
		if a.Float() != b.Float() {
			t.Fatalf("seeded RAND differs between instances")
		}
	}
	// RAND() is not folded into a constant.
	if IsConstant(k.call("RAND")) {
		t.Errorf("RAND() is constant")
	}
}

func TestTimeFunctions(t *testing.T) {
	k := newKit()
	c := k.call
	u := func(s string) Node { return &Literal{V: types.StringValue(s), T: types.String.WithNullable(false)} }
	cases := []exprCase{
		{c("CURRENT_TIMESTAMP"), "2020-04-15 08:05:00.123"},
		{c("NOW"), "2020-04-15 08:05:00.123"},
		{c("LOCALTIMESTAMP"), "2020-04-15 08:05:00.123"},
		{c("CURRENT_DATE"), "2020-04-15"},
		{c("CURRENT_TIME"), "08:05:00"},
		{c("PROCTIME"), "2020-04-15 08:05:00.123"},
		{c("UNIX_TIMESTAMP"), "1586937900"},
		{c("DATE_FORMAT", col("ts"), S("yyyy-MM-dd HH:mm:ss")), "2020-04-15 08:05:00"},
		{c("DATE_FORMAT", col("ts"), S("yyyy/MM/dd HH:mm:ss.SSS")), "2020/04/15 08:05:00.123"},
		{c("DATE_FORMAT", col("ts"), S("EEE, d MMM yy h:mm a")), "Wed, 15 Apr 20 8:05 AM"},
		{c("DATE_FORMAT", col("ts"), S("EEEE MMMM D 'day' '''x'''")), "Wednesday April 106 day 'x'"},
		{c("DATE_FORMAT", col("ts"), S("yyyy-MM-dd'T'HH:mm:ssXXX")), "2020-04-15T08:05:00Z"},
		{c("DATE_FORMAT", S("2020-04-15 08:05:00"), S("yyyyMMdd")), "20200415"},
		{c("DATE_FORMAT", col("dt"), S("yyyy")), "2020"},
		{c("DATE_FORMAT", col("ts"), S("yyyy-qq")), "COMPILE ERROR: cannot apply 'DATE_FORMAT': unsupported letter 'q' in date format 'yyyy-qq'"},
		{c("TO_TIMESTAMP", S("2020-04-15 08:05:00")), "2020-04-15 08:05:00.000"},
		{c("TO_TIMESTAMP", S("2020-04-15 08:05:00.123456")), "2020-04-15 08:05:00.123"},
		{c("TO_TIMESTAMP", S("15/04/2020 08:05"), S("dd/MM/yyyy HH:mm")), "2020-04-15 08:05:00.000"},
		{c("TO_TIMESTAMP", S("20200415080500"), S("yyyyMMddHHmmss")), "2020-04-15 08:05:00.000"},
		{c("TO_TIMESTAMP", S("15-Apr-2020 8:05:00 PM"), S("dd-MMM-yyyy h:mm:ss a")), "2020-04-15 20:05:00.000"},
		{c("TO_TIMESTAMP", S("nonsense")), "NULL"},
		{c("TO_TIMESTAMP", S("2020-04-15"), S("yyyy-MM-dd HH")), "NULL"},
		{c("TO_DATE", S("2020-04-15")), "2020-04-15"},
		{c("TO_DATE", S("15.04.2020"), S("dd.MM.yyyy")), "2020-04-15"},
		{c("TO_TIMESTAMP_LTZ", BI(1586937900), I(0)), "2020-04-15 08:05:00.000"},
		{c("TO_TIMESTAMP_LTZ", BI(1586937900123), I(3)), "2020-04-15 08:05:00.123"},
		{c("TO_TIMESTAMP_LTZ", BI(1586937900123)), "2020-04-15 08:05:00.123"},
		{c("TO_TIMESTAMP_LTZ", BI(1), I(6)), "COMPILE ERROR: cannot apply 'TO_TIMESTAMP_LTZ': the precision must be 0 (seconds) or 3 (milliseconds), got 6"},
		{c("UNIX_TIMESTAMP", S("2020-04-15 08:05:00")), "1586937900"},
		{c("UNIX_TIMESTAMP", S("2020-04-15T08:05:00+02:00"), S("yyyy-MM-dd'T'HH:mm:ssXXX")), "1586930700"},
		{c("UNIX_TIMESTAMP", S("garbage")), "NULL"},
		{c("FROM_UNIXTIME", BI(1586937900)), "2020-04-15 08:05:00"},
		{c("FROM_UNIXTIME", BI(0), S("yyyy-MM-dd")), "1970-01-01"},
		{c("EXTRACT", u("YEAR"), col("ts")), "2020"},
		{c("EXTRACT", u("QUARTER"), col("ts")), "2"},
		{c("EXTRACT", u("MONTH"), col("dt")), "4"},
		{c("EXTRACT", u("WEEK"), col("ts")), "16"},
		{c("EXTRACT", u("DAY"), col("ts")), "15"},
		{c("EXTRACT", u("DOY"), col("ts")), "106"},
		{c("EXTRACT", u("DOW"), col("ts")), "4"},
		{c("EXTRACT", u("ISODOW"), col("ts")), "3"},
		{c("EXTRACT", u("HOUR"), col("ts")), "8"},
		{c("EXTRACT", u("MINUTE"), col("ts")), "5"},
		{c("EXTRACT", u("SECOND"), col("ts")), "0"},
		{c("EXTRACT", u("MILLISECOND"), col("ts")), "123"},
		{c("EXTRACT", u("MICROSECOND"), col("ts")), "123000"},
		{c("EXTRACT", u("EPOCH"), col("ts")), "1586937900"},
		{c("EXTRACT", u("CENTURY"), col("ts")), "21"},
		{c("EXTRACT", u("DAY"), IntervalDT(3*types.MicrosPerDay+types.MicrosPerHour)), "3"},
		{c("EXTRACT", u("HOUR"), IntervalDT(3*types.MicrosPerDay+types.MicrosPerHour)), "1"},
		{c("EXTRACT", u("MONTH"), IntervalYM(14)), "2"},
		{c("EXTRACT", u("HOUR"), col("ltz")), "8"},
		{c("EXTRACT", u("FORTNIGHT"), col("ts")), "BIND ERROR: cannot apply 'EXTRACT': unsupported time unit FORTNIGHT (expected one of YEAR, QUARTER, MONTH, WEEK, DAY, DOY, DOW, ISODOW, ISOYEAR, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, NANOSECOND, EPOCH, DECADE, CENTURY, MILLENNIUM)"},
		{c("YEAR", col("dt")), "2020"},
		{c("QUARTER", col("dt")), "2"},
		{c("MONTH", col("ts")), "4"},
		{c("WEEK", col("ts")), "16"},
		{c("DAYOFYEAR", col("ts")), "106"},
		{c("DAYOFMONTH", col("ts")), "15"},
		{c("DAYOFWEEK", col("ts")), "4"},
		{c("HOUR", col("ts")), "8"},
		{c("MINUTE", col("ts")), "5"},
		{c("SECOND", col("ts")), "0"},
		{c("TIMESTAMPADD", u("DAY"), I(1), col("ts")), "2020-04-16 08:05:00.123"},
		{c("TIMESTAMPADD", u("MONTH"), I(-2), col("dt")), "2020-02-15"},
		{c("TIMESTAMPADD", u("MONTH"), I(1), DT("2020-01-31")), "2020-02-29"},
		{c("TIMESTAMPADD", u("HOUR"), I(3), col("dt")), "2020-04-15 03:00:00"},
		{c("TIMESTAMPADD", u("WEEK"), I(1), col("ltz")), "2020-04-22 08:05:00.123"},
		{c("TIMESTAMPDIFF", u("DAY"), TS("2020-04-10 09:00:00"), col("ts")), "4"},
		{c("TIMESTAMPDIFF", u("HOUR"), col("ts"), TS("2020-04-15 05:00:00")), "-3"},
		{c("TIMESTAMPDIFF", u("MONTH"), DT("2020-01-31"), DT("2020-02-29")), "1"}, // Flink: Jan 31 + 1 month is Feb 29
		{c("TIMESTAMPDIFF", u("MONTH"), DT("2020-01-30"), DT("2020-02-28")), "0"},
		{c("TIMESTAMPDIFF", u("MONTH"), DT("2020-01-15"), DT("2020-03-15")), "2"},
		{c("TIMESTAMPDIFF", u("YEAR"), DT("2019-04-16"), col("dt")), "0"},
		{c("TIMESTAMPDIFF", u("YEAR"), DT("2019-04-15"), col("dt")), "1"},
		{c("TIMESTAMPDIFF", u("SECOND"), col("dt"), col("ts")), "29100"},
		{c("FLOOR", col("ts"), u("HOUR")), "2020-04-15 08:00:00.000"},
		{c("FLOOR", col("ts"), u("DAY")), "2020-04-15 00:00:00.000"},
		{c("FLOOR", col("ts"), u("MONTH")), "2020-04-01 00:00:00.000"},
		{c("FLOOR", col("ts"), u("QUARTER")), "2020-04-01 00:00:00.000"},
		{c("FLOOR", col("ts"), u("YEAR")), "2020-01-01 00:00:00.000"},
		{c("FLOOR", col("ts"), u("WEEK")), "2020-04-12 00:00:00.000"},
		{c("CEIL", col("ts"), u("MINUTE")), "2020-04-15 08:06:00.000"},
		{c("CEIL", col("ts"), u("MONTH")), "2020-05-01 00:00:00.000"},
		{c("CEIL", TS("2020-04-15 08:00:00"), u("HOUR")), "2020-04-15 08:00:00"},
		{c("FLOOR", col("dt"), u("MONTH")), "2020-04-01"},
		{c("CEIL", col("ltz"), u("DAY")), "2020-04-16 00:00:00.000"},
	}
	runCases(t, cases, fixedEnv(nil))
}

func TestTimeFunctionsInZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	k := newKit()
	c := k.call
	u := func(s string) Node { return &Literal{V: types.StringValue(s), T: types.String.WithNullable(false)} }
	cases := []exprCase{
		// The clock reads 08:05 UTC: 10:05 in Berlin (CEST).
		{c("LOCALTIMESTAMP"), "2020-04-15 10:05:00.123"},
		{c("CURRENT_TIME"), "10:05:00"},
		// TIMESTAMP_LTZ values print in UTC here; EXTRACT reads them in the session zone.
		{c("EXTRACT", u("HOUR"), col("ltz")), "10"},
		{c("DATE_FORMAT", col("ltz"), S("HH:mm XXX")), "10:05 +02:00"},
		{c("FROM_UNIXTIME", BI(0)), "1970-01-01 01:00:00"},
		{c("UNIX_TIMESTAMP", S("2020-04-15 10:05:00")), "1586937900"},
		{c("=", col("ltz"), TS("2020-04-15 10:05:00.123")), "TRUE"},
		{k.cast(col("ltz"), types.String), "2020-04-15 10:05:00.123"},
	}
	runCases(t, cases, fixedEnv(berlin))
}

func TestJSONValue(t *testing.T) {
	k := newKit()
	c := k.call
	jv := func(path string) Node { return c("JSON_VALUE", col("js"), S(path)) }
	cases := []exprCase{
		{jv("$.n"), "1.5e3"},
		{jv("$.t"), "true"},
		{jv("$.z"), "NULL"},
		{jv("$.a.b[0]"), "10"},
		{jv("$.a.b[1].c"), `x"y`},
		{jv("$['a']['b'][1][\"c\"]"), `x"y`},
		{jv("lax $.a.b[1].c"), `x"y`},
		{jv("$.a.b[2]"), "NULL"},
		{jv("$.a"), "NULL"}, // not a scalar
		{jv("$.o"), "NULL"},
		{jv("$.missing"), "NULL"},
		{jv("a.b"), "COMPILE ERROR: cannot apply 'JSON_VALUE': invalid JSON path 'a.b': it must start with $"},
		{c("JSON_VALUE", S(`{"a": "\u00e9\n"}`), S("$.a")), "é\n"},
		// A malformed document is an error (NULL ON ERROR), as in Flink, even
		// where the path is found before the document breaks.
		{c("JSON_VALUE", S(`{"a": [1, 2`), S("$.a[1]")), "NULL"},
		{c("JSON_VALUE", S(`{"a": [1, 2]}`), S("$.a[1]")), "2"},
		{c("JSON_VALUE", S(`not json`), S("$.a")), "NULL"},
		{c("JSON_VALUE", col("ns"), S("$.a")), "NULL"},
		{c("JSON_VALUE", col("js"), col("s")), "NULL"},
	}
	runCases(t, cases, nil)
}

func TestCollectionsAndConditionals(t *testing.T) {
	k := newKit()
	c := k.call
	cases := []exprCase{
		{c("ITEM", col("arr"), I(1)), "1"},
		{c("ITEM", col("arr"), I(3)), "3"},
		{c("ITEM", col("arr"), I(0)), "NULL"},
		{c("ITEM", col("arr"), I(4)), "NULL"},
		{c("ITEM", col("m"), S("b")), "2"},
		{c("ITEM", col("m"), S("z")), "NULL"},
		{c("ITEM", col("s"), I(1)), "BIND ERROR: cannot apply 'ITEM' to (STRING, INT): expected (ARRAY, INTEGER) or (MAP, ANY)"},
		{c("FIELD", col("r"), S("y")), "abc"},
		{c("FIELD", col("r"), S("X")), "1"},
		{c("FIELD", c("FIELD", col("rr"), S("in")), S("z")), "42"},
		{c("FIELD", col("rr"), S("w")), "w"},
		{c("FIELD", col("nr"), S("x")), "NULL"},
		{c("FIELD", c("ROW", col("i"), col("s")), S("EXPR$1")), "hello"},
		{c("FIELD", c("FIELD", c("ROW", col("r"), col("s")), S("EXPR$0")), S("y")), "abc"},
		{c("FIELD", c("FIELD", c("IF", col("flag"), col("rr"), col("rr")), S("in")), S("z")), "42"},
		{c("FIELD", c("IF", col("flag"), col("nr"), col("nr")), S("x")), "NULL"},
		{c("FIELD", col("r"), S("yy")), `BIND ERROR: unknown field 'yy' in ROW<` + "`x` INT, `y` STRING>" + ` (did you mean "y"?)`},
		{c("ROW", col("i"), col("s")), "(7, hello)"},
		{c("ARRAY", I(1), Dec("2.5")), "[1.0, 2.5]"},
		{c("MAP", S("k"), I(1), S("k"), I(2)), "{k=2}"},
		{c("CARDINALITY", col("arr")), "3"},
		{c("CARDINALITY", col("m")), "2"},
		{c("COALESCE", col("n"), col("i")), "7"},
		{c("COALESCE", col("n"), Null), "NULL"},
		{c("COALESCE", col("ns"), S("x")), "x"},
		{c("COALESCE", col("n"), Dec("1.5")), "1.5"},
		{c("IFNULL", col("n"), I(0)), "0"},
		{c("NULLIF", col("i"), I(7)), "NULL"},
		{c("NULLIF", col("i"), I(8)), "7"},
		{c("NULLIF", col("i"), col("n")), "7"},
		{c("IF", col("flag"), S("yes"), S("no")), "yes"},
		{c("IF", col("nb"), S("yes"), S("no")), "no"},
		{c("IF", col("i"), S("yes"), S("no")), "BIND ERROR: cannot apply 'IF' to (INT, CHAR(3), CHAR(2)): expected (BOOLEAN, ANY, ANY)"},
		{c("GREATEST", I(1), col("i"), Dec("3.5")), "7.0"},
		{c("LEAST", I(1), col("i"), Dec("3.5")), "1.0"},
		{c("GREATEST", I(1), col("n")), "NULL"},
		{c("COALESCE", col("s"), I(1)), "BIND ERROR: cannot find a common type for COALESCE: STRING and INT"},
	}
	runCases(t, cases, nil)
	if n := c("COALESCE", col("n"), col("i")); n.Type().Nullable() {
		t.Errorf("COALESCE(nullable, NOT NULL) is nullable")
	}
}

func TestBuilderErrors(t *testing.T) {
	b := NewBuilder(NewRegistry())
	_, err := b.Call("UPPPER", &Column{Index: 0, T: types.String})
	if err == nil || err.Error() != `unknown function 'UPPPER' (did you mean "UPPER"?)` {
		t.Errorf("err = %v", err)
	}
	_, err = b.Call("CHAR_LENGTH", &Column{Index: 0, T: types.Int})
	if err == nil || err.Error() != "cannot apply 'CHAR_LENGTH' to (INT): expected (STRING)" {
		t.Errorf("err = %v", err)
	}
	_, err = b.Call("=", &Column{Index: 0, T: types.String}, &Column{Index: 1, T: types.Int.WithNullable(false)})
	if err == nil || err.Error() != "cannot compare STRING with INT in '='" {
		t.Errorf("err = %v", err)
	}
	_, err = b.Call("=", &Column{Index: 0, T: types.String})
	if err == nil {
		t.Errorf("'=' with one operand: no error")
	}
	if _, err := b.Call("UPPER", nil); err == nil {
		t.Errorf("nil argument: no error")
	}
}

func TestRegistryNames(t *testing.T) {
	r := NewRegistry()
	names := r.Names()
	has := func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	for _, n := range []string{"UPPER", "COALESCE", "JSON_VALUE", "TIMESTAMPDIFF", "MOD"} {
		if !has(n) {
			t.Errorf("Names() lacks %s", n)
		}
	}
	for _, n := range []string{"+", "IS NULL", "LIKE"} {
		if has(n) {
			t.Errorf("Names() lists operator %s", n)
		}
	}
	if _, err := r.Lookup("upper"); err != nil {
		t.Errorf("Lookup is not case-insensitive: %v", err)
	}
	if _, err := r.Lookup("lenght"); err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Lookup error = %v", err)
	}
	// Registries are independent values.
	r2 := NewRegistry()
	if err := r.Register(ScalarFunction{Name: "twice", Args: []types.Type{types.BigInt}, Result: types.BigInt,
		Eval: func(a []types.Value) (types.Value, error) { return types.BigIntValue(2 * a[0].Int()), nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Lookup("TWICE"); err == nil {
		t.Errorf("a function registered in one registry is visible in another")
	}
}
