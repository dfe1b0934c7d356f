package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// TestTimeRange: date/time arithmetic whose result leaves Flink's range
// (years 0000 to 9999) or overflows is an error, or NULL where Flink
// gives NULL; it never wraps into a wrong value. Each case says what
// Flink does (flink-table-runtime's DateTimeUtils and the code generated
// by ScalarOperatorGens.generateTemporalPlusMinus and
// TimestampDiffCallGen).
func TestTimeRange(t *testing.T) {
	k := newKit()
	c := k.call
	u := func(s string) Node { return &Literal{V: types.StringValue(s), T: types.String.WithNullable(false)} }
	const outOfRange = "ERROR: ...is outside the supported range"
	const days = types.MicrosPerDay
	cases := []exprCase{
		// TIMESTAMP + INTERVAL: Flink computes in Java longs without a
		// check (TimestampData.fromEpochMillis(ms + interval)), which
		// gives a year past 9999 or a wrapped, wrong instant: an error.
		{c("+", col("ts"), IntervalYM(300000*12)), outOfRange},
		{c("-", col("ts"), IntervalYM(300000*12)), outOfRange},
		{c("+", col("ts"), IntervalYM(math.MaxInt64)), outOfRange},
		{c("+", col("ts"), IntervalDT(math.MaxInt64)), outOfRange},
		{c("-", col("ts"), IntervalDT(math.MinInt64)), outOfRange},
		{c("+", TS("9999-12-31 23:59:59"), IntervalDT(types.MicrosPerSecond)), outOfRange},
		{c("+", TS("9999-12-31 23:59:58"), IntervalDT(types.MicrosPerSecond)), "9999-12-31 23:59:59"},
		{c("-", TS("0000-01-01 00:00:00"), IntervalDT(1)), outOfRange},
		{c("+", col("ltz"), IntervalYM(300000*12)), outOfRange},
		{c("+", col("ltz"), IntervalDT(math.MaxInt64)), outOfRange},
		// DATE + INTERVAL: Flink fails on a day count beyond INT
		// (Math.toIntExact) and adds months in Java ints: an error.
		{c("+", col("dt"), IntervalDT(math.MaxInt64)), outOfRange},
		{c("+", col("dt"), IntervalYM(8000*12)), outOfRange},
		{c("+", IntervalYM(300000*12), col("dt")), outOfRange},
		// TIME + INTERVAL wraps around midnight, as in Flink, whatever
		// the interval.
		{c("+", k.cast(TS("2020-01-01 23:00:00"), types.Time(0)), IntervalDT(math.MaxInt64)), "03:00:54"},
		// Intervals: Flink adds and multiplies in Java ints and longs,
		// wrapping; an overflow is an error here.
		{c("+", IntervalDT(math.MaxInt64), IntervalDT(1)), "ERROR: ...INTERVAL out of range"},
		{c("*", IntervalYM(math.MaxInt64/2), I(3)), "ERROR: ...INTERVAL out of range"},
		{c("NEG", IntervalDT(math.MinInt64)), "ERROR: ...INTERVAL out of range"},
		// TIMESTAMPADD is ts + n * INTERVAL '1' unit in Flink: the same
		// unchecked arithmetic, so an error here.
		{c("TIMESTAMPADD", u("DAY"), I(2147483647), col("ts")), outOfRange},
		{c("TIMESTAMPADD", u("DAY"), I(-2147483648), col("ts")), outOfRange},
		{c("TIMESTAMPADD", u("MICROSECOND"), BI(math.MaxInt64), col("ts")), outOfRange},
		{c("TIMESTAMPADD", u("YEAR"), I(2147483647), col("ts")), outOfRange},
		{c("TIMESTAMPADD", u("YEAR"), I(7979), col("ts")), "9999-04-15 08:05:00.123"},
		{c("TIMESTAMPADD", u("YEAR"), I(7980), col("ts")), outOfRange},
		{c("TIMESTAMPADD", u("MONTH"), I(2147483647), col("dt")), outOfRange},
		{c("TIMESTAMPADD", u("DAY"), I(2147483647), col("dt")), outOfRange},
		{c("TIMESTAMPADD", u("HOUR"), I(2147483647), col("dt")), outOfRange},
		{c("TIMESTAMPADD", u("WEEK"), I(2147483647), col("ltz")), outOfRange},
		{c("TIMESTAMPADD", u("HOUR"), I(2147483647), k.cast(TS("2020-01-01 23:00:00"), types.Time(0))), "06:00:00"},
		// TIMESTAMPDIFF returns an INT; Flink casts the long difference
		// to int, wrapping: an error here when it does not fit.
		{c("TIMESTAMPDIFF", u("MICROSECOND"), TS("0000-01-01 00:00:00"), TS("9999-12-31 23:59:59")), "ERROR: ...does not fit in an INT"},
		{c("TIMESTAMPDIFF", u("SECOND"), TS("1900-01-01 00:00:00"), TS("2100-01-01 00:00:00")), "ERROR: ...does not fit in an INT"},
		{c("TIMESTAMPDIFF", u("DAY"), TS("0000-01-01 00:00:00"), TS("9999-12-31 23:59:59")), "3652424"},
		{c("TIMESTAMPDIFF", u("YEAR"), DT("9999-12-31"), DT("0000-01-01")), "-9999"},
		// CEIL past 9999-12-31: Flink gives year 10000 (printed as
		// 0000); an error here.
		{c("CEIL", TS("9999-12-31 12:00:00"), u("DAY")), outOfRange},
		{c("CEIL", TS("9999-12-31 12:00:00"), u("YEAR")), outOfRange},
		{c("FLOOR", TS("9999-12-31 12:00:00"), u("YEAR")), "9999-01-01 00:00:00"},
		// TO_TIMESTAMP_LTZ: Flink returns NULL outside 0000..9999
		// (DateTimeUtils.toTimestampData).
		{c("TO_TIMESTAMP_LTZ", BI(math.MaxInt64), I(0)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", BI(253402300800), I(0)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", BI(253402300799), I(0)), "9999-12-31 23:59:59.000"},
		{c("TO_TIMESTAMP_LTZ", BI(-62167219201), I(0)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", BI(math.MaxInt64), I(3)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", BI(253402300800000)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", F(1e300), I(0)), "NULL"},
		{c("TO_TIMESTAMP_LTZ", Dec("253402300800"), I(0)), "NULL"},
		// FROM_UNIXTIME: Flink multiplies the seconds by 1000 unchecked
		// and formats what it gets (FROM_UNIXTIME(max BIGINT) prints
		// 1969-12-31 23:59:59); its result type is nullable and a value
		// it cannot format is NULL. Seconds outside 0000..9999 give NULL
		// here, as TO_TIMESTAMP_LTZ(n, 0) does.
		{c("FROM_UNIXTIME", BI(math.MaxInt64)), "NULL"},
		{c("FROM_UNIXTIME", BI(math.MinInt64)), "NULL"},
		{c("FROM_UNIXTIME", BI(253402300799)), "9999-12-31 23:59:59"},
		{c("FROM_UNIXTIME", BI(253402300800)), "NULL"},
		// Strings with a year past 9999 are no timestamps: Flink's
		// parsers refuse them (TO_TIMESTAMP gives NULL).
		{c("TO_TIMESTAMP", S("10000-01-01 00:00:00")), "NULL"},
		{c("TO_TIMESTAMP", S("123456789-01-01"), S("yyyy-MM-dd")), "NULL"},
		{c("TO_DATE", S("99999-01-01")), "NULL"},
		{k.tryCast(S("10000-01-01"), types.Date), "NULL"},
		{k.tryCast(S("-0001-01-01 00:00:00"), types.Timestamp(0)), "NULL"},
		{k.tryCast(BI(math.MaxInt64/types.MicrosPerSecond), types.TimestampLTZ(0)), "NULL"},
	}
	env := fixedEnv(nil)
	for _, tc := range cases {
		got := run(t, tc.n, env)
		if pre, rest, ok := strings.Cut(tc.want, "..."); ok {
			if !strings.HasPrefix(got, pre) || !strings.Contains(got, rest) {
				t.Errorf("%s = %q, want %q...%q", tc.n, got, pre, rest)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.n, got, tc.want)
		}
	}
	// FROM_UNIXTIME may give NULL: its type is nullable, as Flink's.
	if n := c("FROM_UNIXTIME", BI(0)); !n.Type().Nullable() {
		t.Errorf("FROM_UNIXTIME(0) has type %s, want a nullable type", n.Type())
	}
}
