package expr

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluicesql/sluice/types"
)

// unitOrder lists the time units EXTRACT, FLOOR/CEIL ... TO, TIMESTAMPADD
// and TIMESTAMPDIFF accept, with their length in microseconds where fixed.
var unitOrder = map[string]int64{
	"MICROSECOND": 1,
	"MILLISECOND": types.MicrosPerMilli,
	"SECOND":      types.MicrosPerSecond,
	"MINUTE":      types.MicrosPerMinute,
	"HOUR":        types.MicrosPerHour,
	"DAY":         types.MicrosPerDay,
	"WEEK":        7 * types.MicrosPerDay,
	"MONTH":       0,
	"QUARTER":     0,
	"YEAR":        0,
	"NANOSECOND":  0,
	"DOW":         0,
	"ISODOW":      0,
	"DOY":         0,
	"EPOCH":       0,
	"ISOYEAR":     0,
	"DECADE":      0,
	"CENTURY":     0,
	"MILLENNIUM":  0,
}

func unitArg(name string, n Node, allowed ...string) (string, error) {
	s, ok := literalString(n)
	if !ok {
		return "", fmt.Errorf("cannot apply '%s': the time unit must be a literal", name)
	}
	u := strings.ToUpper(s)
	for _, a := range allowed {
		if a == u {
			return u, nil
		}
	}
	return "", fmt.Errorf("cannot apply '%s': unsupported time unit %s (expected one of %s)", name, s, strings.Join(allowed, ", "))
}

// localMicros returns a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ value as
// wall-clock microseconds (a DATE at midnight; a TIMESTAMP_LTZ in loc).
func localMicros(v types.Value, loc *time.Location) int64 {
	switch v.Kind() {
	case types.KindDate:
		return v.Int() * types.MicrosPerDay
	case types.KindTimestampLTZ:
		return types.InstantToLocal(v.Int(), loc)
	}
	return v.Int()
}

func compileNow(c *compiler, call *Call, args []Eval) (Eval, error) {
	now, loc := c.now, c.loc
	var f func() types.Value
	switch call.Name {
	case "CURRENT_TIMESTAMP", "NOW", "PROCTIME", "CURRENT_ROW_TIMESTAMP":
		f = func() types.Value { return types.TimestampLTZValue(types.TruncatePrecision(now(), 3)) }
	case "LOCALTIMESTAMP":
		f = func() types.Value {
			return types.TimestampValue(types.TruncatePrecision(types.InstantToLocal(now(), loc), 3))
		}
	case "CURRENT_DATE":
		f = func() types.Value {
			return types.DateValue(types.FloorDiv(types.InstantToLocal(now(), loc), types.MicrosPerDay))
		}
	case "CURRENT_TIME", "LOCALTIME":
		f = func() types.Value {
			tod := types.FloorMod(types.InstantToLocal(now(), loc), types.MicrosPerDay)
			return types.TimeValue(types.TruncatePrecision(tod, 0))
		}
	case "UNIX_TIMESTAMP":
		f = func() types.Value { return types.BigIntValue(types.FloorDiv(now(), types.MicrosPerSecond)) }
	default:
		return nil, fmt.Errorf("cannot compile %s", call.Name)
	}
	return func([]types.Value) (types.Value, error) { return f(), nil }, nil
}

// formatArg returns a function giving the date format of argument i
// (parsed once when constant), or the default format when absent.
func formatArg(call *Call, i int) (func(v types.Value) (dateFormat, error), error) {
	if i >= len(call.Args) {
		f, _ := parseDateFormat(defaultDateFormat)
		return func(types.Value) (dateFormat, error) { return f, nil }, nil
	}
	if v, ok := constArg(call, i); ok && !v.IsNull() {
		f, err := parseDateFormat(v.Str())
		if err != nil {
			return nil, fmt.Errorf("cannot apply '%s': %w", call.Name, err)
		}
		return func(types.Value) (dateFormat, error) { return f, nil }, nil
	}
	cache := make(map[string]dateFormat)
	return func(v types.Value) (dateFormat, error) {
		if f, ok := cache[v.Str()]; ok {
			return f, nil
		}
		f, err := parseDateFormat(v.Str())
		if err != nil {
			return nil, err
		}
		if len(cache) >= maxCachedPatterns {
			clear(cache)
		}
		cache[v.Str()] = f
		return f, nil
	}, nil
}

func compileDateFormat(c *compiler, call *Call, args []Eval) (Eval, error) {
	getFmt, err := formatArg(call, 1)
	if err != nil {
		return nil, err
	}
	loc := c.loc
	var buf []byte
	// With a constant pattern, the last result is kept with the unit of
	// time it covers (the day, for 'yyyy-MM-dd'): rows come mostly in time
	// order, so most rows repeat it without formatting or allocating.
	var constFmt dateFormat
	granule := int64(0)
	if v, ok := constArg(call, 1); ok && !v.IsNull() {
		if constFmt, err = getFmt(v); err != nil {
			return nil, err
		}
		granule = constFmt.granule()
	}
	var (
		memo     types.Value
		memoUnit int64
		memoOff  int
		memoSet  bool
	)
	// wallOf returns the local wall time of v and its zone offset, or
	// false for a string that is not a timestamp (NULL, as in Flink).
	wallOf := func(v types.Value) (wall int64, off int, ok bool) {
		switch {
		case v.Kind().IsString():
			ts, err := types.ParseTimestamp(v.Str())
			if err != nil {
				return 0, 0, false
			}
			return ts, 0, true
		case v.Kind() == types.KindTimestampLTZ:
			wall = types.InstantToLocal(v.Int(), loc)
			return wall, int((wall - v.Int()) / types.MicrosPerSecond), true
		}
		return localMicros(v, loc), 0, true
	}
	if granule > 1 {
		// The pattern is constant: it is not evaluated per row.
		f, x := constFmt, args[0]
		return func(row []types.Value) (types.Value, error) {
			v, err := x(row)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			wall, off, ok := wallOf(v)
			if !ok {
				return types.NullValue, nil
			}
			unit := types.FloorDiv(wall, granule)
			if memoSet && unit == memoUnit && off == memoOff {
				return memo, nil
			}
			buf = f.format(buf[:0], wall, off)
			memo, memoUnit, memoOff, memoSet = str(string(buf)), unit, off, true
			return memo, nil
		}, nil
	}
	return strict2(args[0], args[1], func(v, p types.Value) (types.Value, error) {
		f, err := getFmt(p)
		if err != nil {
			return types.NullValue, evalErr(call, err)
		}
		wall, off, ok := wallOf(v)
		if !ok {
			return types.NullValue, nil
		}
		buf = f.format(buf[:0], wall, off)
		return str(string(buf)), nil
	}), nil
}

// parseWith parses s with an optional format argument; a string without a
// format is read by types.ParseTimestamp.
func parseWith(s string, f dateFormat) (int64, bool, error) {
	if f == nil {
		m, err := types.ParseTimestamp(s)
		return m, false, err
	}
	return f.parse(s)
}

func optionalFormat(call *Call) (func(vs []types.Value) (dateFormat, error), error) {
	if len(call.Args) < 2 {
		return func([]types.Value) (dateFormat, error) { return nil, nil }, nil
	}
	getFmt, err := formatArg(call, 1)
	if err != nil {
		return nil, err
	}
	return func(vs []types.Value) (dateFormat, error) { return getFmt(vs[1]) }, nil
}

func compileToTimestamp(c *compiler, call *Call, args []Eval) (Eval, error) {
	getFmt, err := optionalFormat(call)
	if err != nil {
		return nil, err
	}
	loc := c.loc
	name := call.Name
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		f, err := getFmt(vs)
		if err != nil {
			return types.NullValue, evalErr(call, err)
		}
		m, zoned, err := parseWith(vs[0].Str(), f)
		if err != nil {
			return types.NullValue, nil
		}
		switch name {
		case "TO_DATE":
			if zoned {
				m = types.InstantToLocal(m, loc)
			}
			return types.DateValue(types.FloorDiv(m, types.MicrosPerDay)), nil
		case "UNIX_TIMESTAMP":
			if !zoned {
				m = types.LocalToInstant(m, loc)
			}
			return types.BigIntValue(types.FloorDiv(m, types.MicrosPerSecond)), nil
		case "TO_TIMESTAMP_LTZ":
			if !zoned {
				m = types.LocalToInstant(m, loc)
			}
			return types.TimestampLTZValue(types.TruncatePrecision(m, 3)), nil
		}
		if zoned {
			m = types.InstantToLocal(m, loc)
		}
		return types.TimestampValue(types.TruncatePrecision(m, 3)), nil
	}), nil
}

func compileUnixTimestamp(c *compiler, call *Call, args []Eval) (Eval, error) {
	if len(args) == 0 {
		return compileNow(c, call, args)
	}
	return compileToTimestamp(c, call, args)
}

func compileToTimestampLTZ(c *compiler, call *Call, args []Eval) (Eval, error) {
	if call.Args[0].Type().Kind.IsString() {
		return compileToTimestamp(c, call, args)
	}
	precision := int64(3)
	if len(args) > 1 {
		v, ok := constArg(call, 1)
		if !ok || v.IsNull() {
			return nil, fmt.Errorf("cannot apply 'TO_TIMESTAMP_LTZ': the precision must be a literal 0 or 3")
		}
		precision = v.Int()
	}
	if precision != 0 && precision != 3 {
		return nil, fmt.Errorf("cannot apply 'TO_TIMESTAMP_LTZ': the precision must be 0 (seconds) or 3 (milliseconds), got %d", precision)
	}
	unit := types.MicrosPerSecond
	if precision == 3 {
		unit = types.MicrosPerMilli
	}
	// Outside 0000..9999 the result is NULL, as Flink's
	// DateTimeUtils.toTimestampData returns.
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		if v.Kind().IsInteger() {
			n := v.Int()
			if n > types.MaxTimestamp/unit || n < types.MinTimestamp/unit {
				return types.NullValue, nil
			}
			return types.TimestampLTZValue(n * unit), nil
		}
		// Compared in the argument's unit, where the bounds are exact.
		x := numOf(v)
		if !(x >= float64(types.MinTimestamp/unit) && x < float64(types.MaxTimestamp/unit+1)) { // NaN too
			return types.NullValue, nil
		}
		return types.TimestampLTZValue(types.TruncatePrecision(int64(x*float64(unit)), 3)), nil
	}), nil
}

func compileFromUnixtime(c *compiler, call *Call, args []Eval) (Eval, error) {
	getFmt, err := formatArg(call, 1)
	if err != nil {
		return nil, err
	}
	loc := c.loc
	var buf []byte
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		var p types.Value
		if len(vs) > 1 {
			p = vs[1]
		}
		f, err := getFmt(p)
		if err != nil {
			return types.NullValue, evalErr(call, err)
		}
		// Flink multiplies the seconds by 1000 unchecked and formats
		// whatever it gets; seconds outside 0000..9999 give NULL here,
		// as in TO_TIMESTAMP_LTZ(n, 0) (Flink's FROM_UNIXTIME is
		// nullable, and NULL when it cannot format its value).
		var inst int64
		if vs[0].Kind().IsInteger() {
			n := vs[0].Int()
			if n > types.MaxTimestamp/types.MicrosPerSecond || n < types.MinTimestamp/types.MicrosPerSecond {
				return types.NullValue, nil
			}
			inst = n * types.MicrosPerSecond
		} else {
			x := numOf(vs[0])
			if !(x >= float64(types.MinTimestamp/types.MicrosPerSecond) && x < float64(types.MaxTimestamp/types.MicrosPerSecond+1)) {
				return types.NullValue, nil
			}
			inst = int64(x * float64(types.MicrosPerSecond))
		}
		wall := types.InstantToLocal(inst, loc)
		buf = f.format(buf[:0], wall, int((wall-inst)/types.MicrosPerSecond))
		return str(string(buf)), nil
	}), nil
}

var extractUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "DOY", "DOW", "ISODOW", "ISOYEAR",
	"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND", "EPOCH", "DECADE", "CENTURY", "MILLENNIUM"}

func bindExtract(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cLiteral, cTemporal), sig(cLiteral, cInterval)}
	if !sigs[0].match(args) && !sigs[1].match(args) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	if _, err := unitArg(name, args[0], extractUnits...); err != nil {
		return nil, types.Type{}, err
	}
	return args, nullableIf(types.BigInt, args[1:]), nil
}

// extract returns a field of a wall-clock time (microseconds).
func extract(unit string, micros int64, k types.Kind) int64 {
	switch k {
	case types.KindIntervalYearMonth:
		switch unit {
		case "YEAR":
			return micros / 12
		case "MONTH":
			return micros % 12
		case "QUARTER":
			return micros%12/3 + 1
		}
		return 0
	case types.KindIntervalDayTime:
		switch unit {
		case "DAY":
			return micros / types.MicrosPerDay
		case "HOUR":
			return micros / types.MicrosPerHour % 24
		case "MINUTE":
			return micros / types.MicrosPerMinute % 60
		case "SECOND":
			return micros / types.MicrosPerSecond % 60
		case "MILLISECOND":
			return micros / types.MicrosPerMilli % 60000
		case "MICROSECOND":
			return micros % (60 * types.MicrosPerSecond)
		case "EPOCH":
			return micros / types.MicrosPerSecond
		}
		return 0
	}
	days := types.FloorDiv(micros, types.MicrosPerDay)
	tod := micros - days*types.MicrosPerDay
	y, m, d := types.CivilFromDate(days)
	switch unit {
	case "YEAR":
		return int64(y)
	case "QUARTER":
		return int64((m-1)/3 + 1)
	case "MONTH":
		return int64(m)
	case "WEEK":
		_, w := isoWeek(days)
		return int64(w)
	case "ISOYEAR":
		iy, _ := isoWeek(days)
		return int64(iy)
	case "DAY":
		return int64(d)
	case "DOY":
		return days - types.DateFromCivil(y, 1, 1) + 1
	case "DOW":
		return int64(dayOfWeek(days) + 1)
	case "ISODOW":
		dow := dayOfWeek(days)
		if dow == 0 {
			dow = 7
		}
		return int64(dow)
	case "HOUR":
		return tod / types.MicrosPerHour
	case "MINUTE":
		return tod / types.MicrosPerMinute % 60
	case "SECOND":
		return tod / types.MicrosPerSecond % 60
	case "MILLISECOND":
		return tod % types.MicrosPerMinute / types.MicrosPerMilli
	case "MICROSECOND":
		return tod % types.MicrosPerMinute
	case "NANOSECOND":
		return tod % types.MicrosPerMinute * 1000
	case "EPOCH":
		return types.FloorDiv(micros, types.MicrosPerSecond)
	case "DECADE":
		return types.FloorDiv(int64(y), 10)
	case "CENTURY":
		if y > 0 {
			return int64((y + 99) / 100)
		}
		return int64(-((-y + 99) / 100))
	case "MILLENNIUM":
		if y > 0 {
			return int64((y + 999) / 1000)
		}
		return int64(-((-y + 999) / 1000))
	}
	return 0
}

func compileExtract(c *compiler, call *Call, args []Eval) (Eval, error) {
	unit, err := unitArg(call.Name, call.Args[0], extractUnits...)
	if err != nil {
		return nil, err
	}
	loc := c.loc
	return strict1(args[1], func(v types.Value) (types.Value, error) {
		k := v.Kind()
		if k == types.KindIntervalDayTime || k == types.KindIntervalYearMonth {
			return types.BigIntValue(extract(unit, v.Int(), k)), nil
		}
		if unit == "EPOCH" && k == types.KindTimestampLTZ {
			return types.BigIntValue(types.FloorDiv(v.Int(), types.MicrosPerSecond)), nil
		}
		return types.BigIntValue(extract(unit, localMicros(v, loc), k)), nil
	}), nil
}

// compileDatePart builds YEAR(x), MONTH(x) ... as EXTRACT.
func compileDatePart(unit string) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		loc := c.loc
		return strict1(args[0], func(v types.Value) (types.Value, error) {
			return types.BigIntValue(extract(unit, localMicros(v, loc), v.Kind())), nil
		}), nil
	}
}

var datePartUnits = map[string]string{
	"YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "WEEK": "WEEK", "DAYOFYEAR": "DOY",
	"DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW", "HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND",
}

var addUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}

func bindTimestampAdd(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cLiteral, cInteger, cTemporal)}
	if !sigs[0].match(args) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	unit, err := unitArg(name, args[0], addUnits...)
	if err != nil {
		return nil, types.Type{}, err
	}
	t := args[2].Type().WithoutTimeAttr()
	switch t.Kind {
	case types.KindDate:
		switch unit {
		case "HOUR", "MINUTE", "SECOND":
			t = types.Timestamp(0)
		case "MILLISECOND":
			t = types.Timestamp(3)
		case "MICROSECOND":
			t = types.Timestamp(6)
		}
	case types.KindTime:
		switch unit {
		case "YEAR", "QUARTER", "MONTH", "WEEK", "DAY":
			return nil, types.Type{}, fmt.Errorf("cannot apply '%s': cannot add %s to a TIME", name, unit)
		}
	}
	return args, nullableIf(t, args[1:]), nil
}

func monthsOf(unit string) int64 {
	switch unit {
	case "YEAR":
		return 12
	case "QUARTER":
		return 3
	case "MONTH":
		return 1
	}
	return 0
}

func compileTimestampAdd(c *compiler, call *Call, args []Eval) (Eval, error) {
	unit, err := unitArg(call.Name, call.Args[0], addUnits...)
	if err != nil {
		return nil, err
	}
	t := call.T
	loc := c.loc
	months := monthsOf(unit)
	step := unitOrder[unit]
	return strict2(args[1], args[2], func(n, v types.Value) (types.Value, error) {
		if t.Kind == types.KindTime {
			// Around the clock: step divides a day for the units a TIME
			// takes, so the count can be reduced first.
			shift := n.Int() % (types.MicrosPerDay / step) * step
			return types.TimeValue(types.FloorMod(v.Int()+shift, types.MicrosPerDay)), nil
		}
		m := v.Int()
		switch v.Kind() {
		case types.KindTimestampLTZ:
			if months != 0 {
				mm, ok := mulChecked(n.Int(), months)
				local, ok2 := addMonthsMicros(types.InstantToLocal(m, loc), mm)
				if !ok || !ok2 {
					return timestampResult(call, t.Kind, 0, false)
				}
				return timestampResult(call, t.Kind, types.LocalToInstant(local, loc), true)
			}
		case types.KindDate:
			m *= types.MicrosPerDay
		}
		var ok bool
		if months != 0 {
			var mm int64
			mm, ok = mulChecked(n.Int(), months)
			var ok2 bool
			m, ok2 = addMonthsMicros(m, mm)
			ok = ok && ok2
		} else {
			var delta int64
			delta, ok = mulChecked(n.Int(), step)
			var ok2 bool
			m, ok2 = addChecked(m, delta)
			ok = ok && ok2
		}
		if t.Kind == types.KindDate {
			return dateResult(call, types.FloorDiv(m, types.MicrosPerDay), ok)
		}
		return timestampResult(call, t.Kind, m, ok)
	}), nil
}

var diffUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}

func bindTimestampDiff(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cLiteral, cDatetime, cDatetime)}
	if !sigs[0].match(args) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	if _, err := unitArg(name, args[0], diffUnits...); err != nil {
		return nil, types.Type{}, err
	}
	return args, nullableIf(types.Int, args[1:]), nil
}

func subtractMonthsDays(d0, d1 int64) int64 {
	if d0 < d1 {
		return -subtractMonthsDays(d1, d0)
	}
	m := (d0 - d1) / 31
	// Both dates are in range, so no shift here leaves addMonths' bounds.
	for {
		if d, _ := addMonths(d1, m); d >= d0 {
			return m
		}
		if d, _ := addMonths(d1, m+1); d > d0 {
			return m
		}
		m++
	}
}

// subtractMonths returns the whole months from t1 to t0 as Flink counts
// them.
func subtractMonths(t0, t1 int64) int64 {
	m0 := types.FloorMod(t0, types.MicrosPerDay)
	d0 := types.FloorDiv(t0, types.MicrosPerDay)
	m1 := types.FloorMod(t1, types.MicrosPerDay)
	d1 := types.FloorDiv(t1, types.MicrosPerDay)
	x := subtractMonthsDays(d0, d1)
	if d, _ := addMonths(d1, x); d == d0 && m0 < m1 {
		x--
	}
	return x
}

func compileTimestampDiff(c *compiler, call *Call, args []Eval) (Eval, error) {
	unit, err := unitArg(call.Name, call.Args[0], diffUnits...)
	if err != nil {
		return nil, err
	}
	loc := c.loc
	months := monthsOf(unit)
	step := unitOrder[unit]
	return strict2(args[1], args[2], func(a, b types.Value) (types.Value, error) {
		var r int64
		if months != 0 {
			r = subtractMonths(localMicros(b, loc), localMicros(a, loc)) / months
		} else {
			x, y := a.Int(), b.Int()
			if a.Kind() != types.KindTimestampLTZ || b.Kind() != types.KindTimestampLTZ {
				x, y = localMicros(a, loc), localMicros(b, loc)
			}
			d, ok := addChecked(y, -x)
			if !ok || x == math.MinInt64 {
				return types.NullValue, evalErr(call, errors.New("the difference overflows"))
			}
			r = d / step
		}
		// Flink casts the difference to an INT, wrapping; that would be
		// a wrong answer.
		if r > math.MaxInt32 || r < math.MinInt32 {
			return types.NullValue, evalErr(call, fmt.Errorf("the difference, %d %sS, does not fit in an INT; use a larger unit", r, unit))
		}
		return types.IntValue(types.KindInt, r), nil
	}), nil
}

var floorUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}

func bindFloorCeilTime(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cTemporal, cLiteral)}
	if !sigs[0].match(args) {
		return nil, types.Type{}, argError(name, args, append(sigs, sig(cNumeric)))
	}
	unit, err := unitArg(name, args[1], floorUnits...)
	if err != nil {
		return nil, types.Type{}, err
	}
	t := args[0].Type().WithoutTimeAttr()
	if t.Kind == types.KindTime && monthsOf(unit) != 0 || t.Kind == types.KindTime && (unit == "WEEK" || unit == "DAY") {
		return nil, types.Type{}, fmt.Errorf("cannot apply '%s': cannot round a TIME to %s", name, unit)
	}
	return args, nullableIf(t, args[:1]), nil
}

// floorTime rounds wall-clock micros down (or up) to a unit boundary; it
// reports false when rounding up leaves the supported range.
func floorTime(m int64, unit string, ceil bool) (int64, bool) {
	days := types.FloorDiv(m, types.MicrosPerDay)
	var f int64
	var next func(int64) (int64, bool)
	switch unit {
	case "YEAR", "QUARTER", "MONTH":
		y, mo, _ := types.CivilFromDate(days)
		step := monthsOf(unit)
		switch unit {
		case "YEAR":
			mo = 1
		case "QUARTER":
			mo = (mo-1)/3*3 + 1
		}
		f = types.DateFromCivil(y, mo, 1) * types.MicrosPerDay
		next = func(x int64) (int64, bool) { return addMonthsMicros(x, step) }
	case "WEEK":
		f = (days - int64(dayOfWeek(days))) * types.MicrosPerDay
		next = func(x int64) (int64, bool) { return addChecked(x, 7*types.MicrosPerDay) }
	default:
		step := unitOrder[unit]
		f = types.FloorDiv(m, step) * step
		next = func(x int64) (int64, bool) { return addChecked(x, step) }
	}
	if ceil && f != m {
		return next(f)
	}
	return f, true
}

func compileFloorCeilTime(c *compiler, call *Call, args []Eval) (Eval, error) {
	unit, err := unitArg(call.Name, call.Args[1], floorUnits...)
	if err != nil {
		return nil, err
	}
	ceil := call.Name != "FLOOR"
	loc := c.loc
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		switch v.Kind() {
		case types.KindDate:
			m, ok := floorTime(v.Int()*types.MicrosPerDay, unit, ceil)
			return dateResult(call, types.FloorDiv(m, types.MicrosPerDay), ok)
		case types.KindTime:
			m, _ := floorTime(v.Int(), unit, ceil) // no overflow within a day
			return types.TimeValue(types.FloorMod(m, types.MicrosPerDay)), nil
		case types.KindTimestampLTZ:
			local, ok := floorTime(types.InstantToLocal(v.Int(), loc), unit, ceil)
			if !ok {
				return timestampResult(call, types.KindTimestampLTZ, 0, false)
			}
			return timestampResult(call, types.KindTimestampLTZ, types.LocalToInstant(local, loc), true)
		}
		m, ok := floorTime(v.Int(), unit, ceil)
		return timestampResult(call, types.KindTimestamp, m, ok)
	}), nil
}
