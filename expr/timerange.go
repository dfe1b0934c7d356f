package expr

import (
	"errors"
	"fmt"
	"math"

	"github.com/sluicesql/sluice/types"
)

// Date/time arithmetic never wraps: a result outside Flink's range
// (types.MinTimestamp to types.MaxTimestamp, years 0000 to 9999) or an
// overflow on the way is an error, except where Flink itself gives NULL
// (TO_TIMESTAMP_LTZ and FROM_UNIXTIME of an epoch value out of range).
// Flink computes most of these in Java ints and longs without a check and
// so returns wrong values; an error is what it does where it checks
// (Math.toIntExact in DATE + INTERVAL).

var errIntervalRange = errors.New("INTERVAL out of range: the result overflows")

// timeRangeError is the error of a call whose result of kind k leaves the
// supported range.
func timeRangeError(call *Call, k types.Kind) error {
	what, bounds := "TIMESTAMP", "0000-01-01 00:00:00 to 9999-12-31 23:59:59.999999"
	switch k {
	case types.KindDate:
		what, bounds = "DATE", "0000-01-01 to 9999-12-31"
	case types.KindTimestampLTZ:
		what, bounds = "TIMESTAMP_LTZ", "0000-01-01 00:00:00Z to 9999-12-31 23:59:59.999999Z"
	}
	return evalErr(call, fmt.Errorf("the result is outside the supported range of %s values (%s)", what, bounds))
}

// dateResult returns days as a DATE, or the range error.
func dateResult(call *Call, days int64, ok bool) (types.Value, error) {
	if !ok || !types.DateInRange(days) {
		return types.NullValue, timeRangeError(call, types.KindDate)
	}
	return types.DateValue(days), nil
}

// timestampResult returns micros as a TIMESTAMP or TIMESTAMP_LTZ (k), or
// the range error.
func timestampResult(call *Call, k types.Kind, micros int64, ok bool) (types.Value, error) {
	if !ok || !types.TimestampInRange(micros) {
		return types.NullValue, timeRangeError(call, k)
	}
	if k == types.KindTimestampLTZ {
		return types.TimestampLTZValue(micros), nil
	}
	return types.TimestampValue(micros), nil
}

// addChecked returns a+b and whether it did not overflow.
func addChecked(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// mulChecked returns a*b and whether it did not overflow.
func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// maxMonthShift bounds the months added to a date: any more take every
// date in range out of it, and fewer keep the arithmetic far from
// overflowing.
const maxMonthShift = 12 * 20000
