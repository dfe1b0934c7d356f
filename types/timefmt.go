package types

import (
	"fmt"
	"time"
)

// Time units in microseconds, the unit of TIME, TIMESTAMP, TIMESTAMP_LTZ and
// INTERVAL DAY TO SECOND values.
const (
	MicrosPerMilli  int64 = 1000
	MicrosPerSecond int64 = 1000 * MicrosPerMilli
	MicrosPerMinute int64 = 60 * MicrosPerSecond
	MicrosPerHour   int64 = 60 * MicrosPerMinute
	MicrosPerDay    int64 = 24 * MicrosPerHour
)

// The range of DATE, TIMESTAMP and TIMESTAMP_LTZ values, Flink's: from
// 0000-01-01 00:00:00 to 9999-12-31 23:59:59.999999 (a TIMESTAMP_LTZ in
// UTC). Parsing refuses anything outside it, and date/time arithmetic
// whose result leaves it fails instead of giving a wrong value.
const (
	MinDate      int64 = -719528 // 0000-01-01
	MaxDate      int64 = 2932896 // 9999-12-31
	MinTimestamp       = MinDate * MicrosPerDay
	MaxTimestamp       = (MaxDate+1)*MicrosPerDay - 1
)

// DateInRange reports whether a DATE value (days since the epoch) lies in
// [MinDate, MaxDate].
func DateInRange(days int64) bool { return days >= MinDate && days <= MaxDate }

// TimestampInRange reports whether a TIMESTAMP or TIMESTAMP_LTZ value
// (microseconds since the epoch) lies in [MinTimestamp, MaxTimestamp].
func TimestampInRange(micros int64) bool { return micros >= MinTimestamp && micros <= MaxTimestamp }

// FloorDiv returns a/b rounded toward negative infinity (b > 0).
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// FloorMod returns a - FloorDiv(a, b)*b, in [0, b) for b > 0.
func FloorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// DateFromCivil returns the days since 1970-01-01 of the proleptic Gregorian
// date y-m-d (m in 1..12, d in 1..31; not validated).
func DateFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := yy
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := yy - era*400
	mm := int64(m)
	if mm > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// CivilFromDate returns the proleptic Gregorian year, month (1..12) and day
// (1..31) of a DATE value (days since 1970-01-01).
func CivilFromDate(days int64) (y, m, d int) {
	z := days + 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		yy++
	}
	return int(yy), m, d
}

// IsLeapYear reports whether y is a leap year in the proleptic Gregorian calendar.
func IsLeapYear(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// DaysInMonth returns the number of days of month m (1..12) of year y.
func DaysInMonth(y, m int) int {
	switch m {
	case 2:
		if IsLeapYear(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// TruncatePrecision truncates micros (a TIME, TIMESTAMP or TIMESTAMP_LTZ
// value) to the given fractional-second precision, toward negative infinity
// so that a timestamp keeps its second. Precisions of 6 and above are
// returned unchanged.
func TruncatePrecision(micros int64, precision int) int64 {
	if precision >= 6 || precision < 0 {
		return micros
	}
	unit := pow10[6-precision]
	return FloorDiv(micros, unit) * unit
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// scanner over a date/time string.
type tscan struct {
	s string
	i int
}

// num reads between minD and maxD digits.
func (t *tscan) num(minD, maxD int) (int, bool) {
	n, d := 0, 0
	for t.i < len(t.s) && d < maxD {
		c := t.s[t.i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		t.i++
		d++
	}
	return n, d >= minD
}

func (t *tscan) eat(c byte) bool {
	if t.i < len(t.s) && t.s[t.i] == c {
		t.i++
		return true
	}
	return false
}

func (t *tscan) done() bool { return t.i == len(t.s) }

// date reads y-m-d and returns days since the epoch. The year is one of
// 0000 to 9999, as in Flink: a longer or negative one is refused.
func (t *tscan) date() (int64, bool) {
	y, ok := t.num(1, 4)
	if !ok || !t.eat('-') {
		return 0, false
	}
	m, ok := t.num(1, 2)
	if !ok || !t.eat('-') || m < 1 || m > 12 {
		return 0, false
	}
	d, ok := t.num(1, 2)
	if !ok || d < 1 || d > DaysInMonth(y, m) {
		return 0, false
	}
	return DateFromCivil(y, m, d), true
}

// clock reads H:m[:s[.f]] and returns microseconds since midnight.
func (t *tscan) clock() (int64, bool) {
	h, ok := t.num(1, 2)
	if !ok || h > 23 || !t.eat(':') {
		return 0, false
	}
	mi, ok := t.num(1, 2)
	if !ok || mi > 59 {
		return 0, false
	}
	var sec int
	var frac int64
	if t.eat(':') {
		sec, ok = t.num(1, 2)
		if !ok || sec > 59 {
			return 0, false
		}
		if t.eat('.') {
			n := 0
			for t.i < len(t.s) {
				c := t.s[t.i]
				if c < '0' || c > '9' {
					break
				}
				if n < 6 {
					frac = frac*10 + int64(c-'0')
				}
				n++
				t.i++
			}
			if n == 0 || n > 9 {
				return 0, false
			}
			for ; n < 6; n++ {
				frac *= 10
			}
		}
	}
	return int64(h)*MicrosPerHour + int64(mi)*MicrosPerMinute + int64(sec)*MicrosPerSecond + frac, true
}

// zone reads Z, +hh, +hh:mm or +hhmm and returns the offset in micros.
func (t *tscan) zone() (int64, bool) {
	if t.eat('Z') || t.eat('z') {
		return 0, true
	}
	sign := int64(1)
	switch {
	case t.eat('+'):
	case t.eat('-'):
		sign = -1
	default:
		return 0, false
	}
	h, ok := t.num(2, 2)
	if !ok || h > 18 {
		return 0, false
	}
	m := 0
	if t.eat(':') {
		if m, ok = t.num(2, 2); !ok {
			return 0, false
		}
	} else if !t.done() {
		if m, ok = t.num(2, 2); !ok {
			return 0, false
		}
	}
	if m > 59 {
		return 0, false
	}
	return sign * (int64(h)*MicrosPerHour + int64(m)*MicrosPerMinute), true
}

// ParseDate parses "yyyy-MM-dd" (month and day may have one digit;
// surrounding whitespace is ignored) and returns days since 1970-01-01.
func ParseDate(s string) (int64, error) {
	t := tscan{s: trimSpace(s)}
	d, ok := t.date()
	if !ok || !t.done() {
		return 0, fmt.Errorf("cannot parse %q as DATE", s)
	}
	return d, nil
}

// ParseTime parses "HH:mm[:ss[.fffffffff]]" and returns microseconds since
// midnight; digits beyond microseconds are truncated.
func ParseTime(s string) (int64, error) {
	t := tscan{s: trimSpace(s)}
	c, ok := t.clock()
	if !ok || !t.done() {
		return 0, fmt.Errorf("cannot parse %q as TIME", s)
	}
	return c, nil
}

// ParseTimestamp parses a timestamp in Flink's SQL form
// "yyyy-MM-dd HH:mm:ss[.fffffffff]" or in ISO-8601 form
// "yyyy-MM-ddTHH:mm:ss[.fff][Z|+hh:mm]" and returns microseconds since the
// epoch. A date alone means midnight and seconds may be omitted. A
// zone-qualified string is converted to UTC; an unqualified one is read as
// a UTC wall-clock time (a TIMESTAMP value). Digits beyond microseconds are
// truncated.
func ParseTimestamp(s string) (int64, error) {
	m, _, err := parseTimestamp(s)
	return m, err
}

// parseTimestamp is ParseTimestamp also reporting whether the string carried
// a zone.
func parseTimestamp(s string) (micros int64, zoned bool, err error) {
	t := tscan{s: trimSpace(s)}
	d, ok := t.date()
	if !ok {
		return 0, false, fmt.Errorf("cannot parse %q as TIMESTAMP", s)
	}
	micros = d * MicrosPerDay
	if t.done() {
		return micros, false, nil
	}
	if !t.eat(' ') && !t.eat('T') && !t.eat('t') {
		return 0, false, fmt.Errorf("cannot parse %q as TIMESTAMP", s)
	}
	c, ok := t.clock()
	if !ok {
		return 0, false, fmt.Errorf("cannot parse %q as TIMESTAMP", s)
	}
	micros += c
	if t.done() {
		return micros, false, nil
	}
	off, ok := t.zone()
	if !ok || !t.done() {
		return 0, false, fmt.Errorf("cannot parse %q as TIMESTAMP", s)
	}
	if !TimestampInRange(micros - off) {
		return 0, false, fmt.Errorf("cannot parse %q as TIMESTAMP: the instant is outside the range 0000-01-01 00:00:00Z to 9999-12-31 23:59:59.999999Z", s)
	}
	return micros - off, true, nil
}

// ZoneOffset returns the offset from UTC, in microseconds, of zone loc at
// the instant micros. A nil loc is UTC.
func ZoneOffset(micros int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return 0
	}
	_, off := time.UnixMicro(micros).In(loc).Zone()
	return int64(off) * MicrosPerSecond
}

// InstantToLocal converts an instant (TIMESTAMP_LTZ) to the wall-clock time
// (TIMESTAMP) in zone loc.
func InstantToLocal(micros int64, loc *time.Location) int64 {
	return micros + ZoneOffset(micros, loc)
}

// LocalToInstant converts a wall-clock time (TIMESTAMP) in zone loc to an
// instant (TIMESTAMP_LTZ), as java.time's LocalDateTime.atZone does: a time
// in a gap (a daylight saving time start) moves later by the length of the
// gap, and an ambiguous time (a daylight saving time end) takes the
// earlier offset, the one before the transition. (time.Date leaves the
// choice open, and makes it differently on either side of UTC.)
func LocalToInstant(wall int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return wall
	}
	// The offsets a day before and after: those on either side of a
	// transition near wall (zones never move twice within two days).
	before := ZoneOffset(wall-MicrosPerDay, loc)
	after := ZoneOffset(wall+MicrosPerDay, loc)
	switch {
	case ZoneOffset(wall-before, loc) == before:
		// Valid under the earlier offset: the only one, or the first
		// of two.
		return wall - before
	case ZoneOffset(wall-after, loc) == after:
		return wall - after
	}
	// In a gap: later by the gap's length, which is wall read with the
	// offset before the transition.
	return wall - before
}

func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

func appendYear(dst []byte, y int) []byte {
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	if y < 10000 {
		return append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
	}
	var buf [12]byte
	i := len(buf)
	for y > 0 {
		i--
		buf[i] = byte('0' + y%10)
		y /= 10
	}
	return append(dst, buf[i:]...)
}

// AppendDate appends a DATE value (days since the epoch) as "yyyy-MM-dd".
func AppendDate(dst []byte, days int64) []byte {
	y, m, d := CivilFromDate(days)
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// FormatDate formats a DATE value as "yyyy-MM-dd".
func FormatDate(days int64) string { return string(AppendDate(make([]byte, 0, 10), days)) }

// AppendTime appends a TIME value (microseconds since midnight) as
// "HH:mm:ss" followed by exactly precision fraction digits.
func AppendTime(dst []byte, micros int64, precision int) []byte {
	micros = FloorMod(micros, MicrosPerDay)
	sec := micros / MicrosPerSecond
	dst = append2(dst, int(sec/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(sec/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(sec%60))
	return appendFraction(dst, micros%MicrosPerSecond, precision)
}

// appendFraction appends "." and precision digits of a microsecond fraction
// (nothing for precision 0; zeros beyond the sixth digit).
func appendFraction(dst []byte, frac int64, precision int) []byte {
	if precision <= 0 {
		return dst
	}
	dst = append(dst, '.')
	div := int64(100000)
	for i := 0; i < precision; i++ {
		if i < 6 {
			dst = append(dst, byte('0'+frac/div%10))
			div /= 10
		} else {
			dst = append(dst, '0')
		}
	}
	return dst
}

// FormatTime formats a TIME value as "HH:mm:ss[.fff]" with exactly
// precision fraction digits.
func FormatTime(micros int64, precision int) string {
	return string(AppendTime(make([]byte, 0, 18), micros, precision))
}

func appendTimestamp(dst []byte, micros int64, precision int, sep byte) []byte {
	days := FloorDiv(micros, MicrosPerDay)
	dst = AppendDate(dst, days)
	dst = append(dst, sep)
	return AppendTime(dst, micros-days*MicrosPerDay, precision)
}

// AppendTimestamp appends a TIMESTAMP value in Flink's SQL form
// "yyyy-MM-dd HH:mm:ss" followed by exactly precision fraction digits
// ("2020-04-15 08:05:00.000" for precision 3).
func AppendTimestamp(dst []byte, micros int64, precision int) []byte {
	return appendTimestamp(dst, micros, precision, ' ')
}

// FormatTimestamp formats a TIMESTAMP value in Flink's SQL form; see
// AppendTimestamp.
func FormatTimestamp(micros int64, precision int) string {
	return string(AppendTimestamp(make([]byte, 0, 32), micros, precision))
}

// AppendTimestampISO appends a TIMESTAMP value in ISO-8601 form
// "yyyy-MM-ddTHH:mm:ss" followed by exactly precision fraction digits.
func AppendTimestampISO(dst []byte, micros int64, precision int) []byte {
	return appendTimestamp(dst, micros, precision, 'T')
}

// FormatTimestampISO formats a TIMESTAMP value in ISO-8601 form
// ("2020-04-15T08:05:00.000" for precision 3).
func FormatTimestampISO(micros int64, precision int) string {
	return string(AppendTimestampISO(make([]byte, 0, 32), micros, precision))
}

// AppendTimestampISOZ appends a TIMESTAMP_LTZ value as a UTC instant in
// ISO-8601 form with a "Z" suffix ("2020-04-15T08:05:00.000Z"), the form
// Flink's JSON format writes for TIMESTAMP_LTZ.
func AppendTimestampISOZ(dst []byte, micros int64, precision int) []byte {
	return append(appendTimestamp(dst, micros, precision, 'T'), 'Z')
}

// FormatTimestampISOZ formats a TIMESTAMP_LTZ value as a UTC instant with a
// "Z" suffix; see AppendTimestampISOZ.
func FormatTimestampISOZ(micros int64, precision int) string {
	return string(AppendTimestampISOZ(make([]byte, 0, 33), micros, precision))
}
