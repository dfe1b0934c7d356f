package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// Date format patterns follow Java's SimpleDateFormat / DateTimeFormatter
// letters, which Flink's DATE_FORMAT, TO_TIMESTAMP, TO_DATE,
// UNIX_TIMESTAMP and FROM_UNIXTIME take:
//
//	G era (AD)            y yyyy year, yy two-digit year   M MM month, MMM Jan, MMMM January
//	d day of month        D day of year                    E EEE Mon, EEEE Monday
//	u day of week (1=Mon) w ISO week of year               a AM/PM
//	H hour 0-23           k hour 1-24   K hour 0-11        h hour 1-12
//	m minute              s second                         S fraction of second (SSS = millis)
//	X Z, +01, +0100, +01:00 (XXX)  Z +0100                 z UTC
//	'text' literal text, '' a quote; other non-letters are literal.
//
// S is a fraction of a second as in DateTimeFormatter: S...S with n letters
// prints or reads n digits. Parsing requires the whole input to match.

type dtField uint8

const (
	fLiteral dtField = iota
	fEra
	fYear
	fMonth
	fDay
	fDayOfYear
	fDayName
	fDayNum
	fWeek
	fAmPm
	fHour24 // H
	fHourK  // k
	fHour0  // K
	fHour12 // h
	fMinute
	fSecond
	fFraction
	fZoneX
	fZoneZ
	fZoneName
)

type dtToken struct {
	f     dtField
	width int
	lit   string
}

type dateFormat []dtToken

// defaultDateFormat is Flink's default pattern for the time functions.
const defaultDateFormat = "yyyy-MM-dd HH:mm:ss"

func parseDateFormat(p string) (dateFormat, error) {
	var out dateFormat
	addLit := func(s string) {
		if n := len(out); n > 0 && out[n-1].f == fLiteral {
			out[n-1].lit += s
			return
		}
		out = append(out, dtToken{f: fLiteral, lit: s})
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\'' {
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("unterminated quote in date format '%s'", p)
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				addLit("'")
			} else {
				addLit(lit.String())
			}
			i = j + 1
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			addLit(string(c))
			i++
			continue
		}
		j := i
		for j < len(p) && p[j] == c {
			j++
		}
		w := j - i
		var f dtField
		switch c {
		case 'G':
			f = fEra
		case 'y', 'Y', 'u':
			f = fYear
			if c == 'u' {
				f = fDayNum
			}
		case 'M', 'L':
			f = fMonth
		case 'd':
			f = fDay
		case 'D':
			f = fDayOfYear
		case 'E':
			f = fDayName
		case 'w':
			f = fWeek
		case 'a':
			f = fAmPm
		case 'H':
			f = fHour24
		case 'k':
			f = fHourK
		case 'K':
			f = fHour0
		case 'h':
			f = fHour12
		case 'm':
			f = fMinute
		case 's':
			f = fSecond
		case 'S':
			f = fFraction
		case 'X':
			f = fZoneX
		case 'Z':
			f = fZoneZ
		case 'z':
			f = fZoneName
		default:
			return nil, fmt.Errorf("unsupported letter '%c' in date format '%s'", c, p)
		}
		out = append(out, dtToken{f: f, width: w})
		i = j
	}
	return out, nil
}

// granule returns the length in microseconds of the units of time within
// which f prints the same text for the same zone offset: a day for
// 'yyyy-MM-dd', an hour for 'yyyy-MM-dd HH', 1 with fractions of a second.
func (f dateFormat) granule() int64 {
	g := int64(types.MicrosPerDay)
	for _, t := range f {
		switch t.f {
		case fAmPm, fHour24, fHourK, fHour0, fHour12:
			g = min(g, types.MicrosPerHour)
		case fMinute:
			g = min(g, types.MicrosPerMinute)
		case fSecond:
			g = min(g, types.MicrosPerSecond)
		case fFraction:
			g = 1
		}
	}
	return g
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

func appendPadded(dst []byte, n int64, width int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// dayOfWeek returns 0 for Sunday .. 6 for Saturday.
func dayOfWeek(days int64) int { return int(types.FloorMod(days+4, 7)) }

// isoWeek returns the ISO-8601 week-based year and week number.
func isoWeek(days int64) (year, week int) {
	dow := dayOfWeek(days)
	if dow == 0 {
		dow = 7
	}
	thursday := days + int64(4-dow)
	y, _, _ := types.CivilFromDate(thursday)
	jan1 := types.DateFromCivil(y, 1, 1)
	return y, int((thursday-jan1)/7) + 1
}

// format appends wall-clock time micros (with the zone offset in seconds
// for the zone letters) formatted by f.
func (f dateFormat) format(dst []byte, micros int64, offsetSec int) []byte {
	days := types.FloorDiv(micros, types.MicrosPerDay)
	tod := micros - days*types.MicrosPerDay
	y, m, d := types.CivilFromDate(days)
	hour := int(tod / types.MicrosPerHour)
	for _, t := range f {
		switch t.f {
		case fLiteral:
			dst = append(dst, t.lit...)
		case fEra:
			if y > 0 {
				dst = append(dst, "AD"...)
			} else {
				dst = append(dst, "BC"...)
			}
		case fYear:
			if t.width == 2 {
				dst = appendPadded(dst, int64(types.FloorMod(int64(y), 100)), 2)
			} else {
				dst = appendPadded(dst, int64(y), t.width)
			}
		case fMonth:
			switch {
			case t.width >= 4:
				dst = append(dst, monthNames[m-1]...)
			case t.width == 3:
				dst = append(dst, monthNames[m-1][:3]...)
			default:
				dst = appendPadded(dst, int64(m), t.width)
			}
		case fDay:
			dst = appendPadded(dst, int64(d), t.width)
		case fDayOfYear:
			dst = appendPadded(dst, days-types.DateFromCivil(y, 1, 1)+1, t.width)
		case fDayName:
			name := dayNames[dayOfWeek(days)]
			if t.width < 4 {
				name = name[:3]
			}
			dst = append(dst, name...)
		case fDayNum:
			dow := dayOfWeek(days)
			if dow == 0 {
				dow = 7
			}
			dst = appendPadded(dst, int64(dow), t.width)
		case fWeek:
			_, w := isoWeek(days)
			dst = appendPadded(dst, int64(w), t.width)
		case fAmPm:
			if hour < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case fHour24:
			dst = appendPadded(dst, int64(hour), t.width)
		case fHourK:
			h := hour
			if h == 0 {
				h = 24
			}
			dst = appendPadded(dst, int64(h), t.width)
		case fHour0:
			dst = appendPadded(dst, int64(hour%12), t.width)
		case fHour12:
			h := hour % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, int64(h), t.width)
		case fMinute:
			dst = appendPadded(dst, tod/types.MicrosPerMinute%60, t.width)
		case fSecond:
			dst = appendPadded(dst, tod/types.MicrosPerSecond%60, t.width)
		case fFraction:
			frac := tod % types.MicrosPerSecond
			div := int64(100000)
			for i := 0; i < t.width; i++ {
				if i < 6 {
					dst = append(dst, byte('0'+frac/div%10))
					div /= 10
				} else {
					dst = append(dst, '0')
				}
			}
		case fZoneX, fZoneZ:
			if t.f == fZoneX && offsetSec == 0 {
				dst = append(dst, 'Z')
				continue
			}
			sign := byte('+')
			off := offsetSec
			if off < 0 {
				sign, off = '-', -off
			}
			dst = append(dst, sign)
			dst = appendPadded(dst, int64(off/3600), 2)
			switch {
			case t.f == fZoneZ, t.width == 2:
				dst = appendPadded(dst, int64(off/60%60), 2)
			case t.width >= 3:
				dst = append(dst, ':')
				dst = appendPadded(dst, int64(off/60%60), 2)
			}
		case fZoneName:
			if offsetSec == 0 {
				dst = append(dst, "UTC"...)
			} else {
				dst = append(dst, "GMT"...)
				dst = (dateFormat{{f: fZoneX, width: 3}}).format(dst, 0, offsetSec)
			}
		}
	}
	return dst
}

// numeric reports whether a token reads digits (for adjacent fields such
// as yyyyMMdd, which are then read by width).
func (t dtToken) numeric() bool {
	return isNumericField(t.f) || t.f == fMonth && t.width <= 2
}

func isNumericField(f dtField) bool {
	switch f {
	case fYear, fDay, fDayOfYear, fDayNum, fWeek, fHour24, fHourK, fHour0, fHour12, fMinute, fSecond, fFraction:
		return true
	}
	return false
}

// parse reads s by f. It returns the wall-clock time in microseconds, or,
// when s carried a zone, the UTC instant with zoned set.
func (f dateFormat) parse(s string) (micros int64, zoned bool, err error) {
	bad := func() (int64, bool, error) {
		return 0, false, fmt.Errorf("cannot parse '%s' with the date format", s)
	}
	y, m, d := 1970, 1, 1
	doy := -1
	hour, minute, sec := 0, 0, 0
	var frac int64
	pm, ampm := false, false
	var offset int64
	i := 0
	for ti, t := range f {
		if t.f == fLiteral {
			if !strings.HasPrefix(s[i:], t.lit) {
				return bad()
			}
			i += len(t.lit)
			continue
		}
		if isNumericField(t.f) {
			maxW := 10
			adjacent := ti+1 < len(f) && f[ti+1].numeric()
			if adjacent || t.f == fFraction && t.width > 1 {
				maxW = t.width
			}
			neg := false
			if t.f == fYear && i < len(s) && (s[i] == '-' || s[i] == '+') && t.width > 2 {
				neg = s[i] == '-'
				i++
			}
			start := i
			var n int64
			for i < len(s) && i-start < maxW && s[i] >= '0' && s[i] <= '9' {
				n = n*10 + int64(s[i]-'0')
				i++
			}
			nd := i - start
			if nd == 0 || (adjacent && nd != t.width) {
				return bad()
			}
			if neg {
				n = -n
			}
			switch t.f {
			case fYear:
				y = int(n)
				if t.width == 2 && nd == 2 {
					y = 2000 + int(n)
				}
			case fDay:
				d = int(n)
			case fDayOfYear:
				doy = int(n)
			case fHour24, fHour0:
				hour = int(n)
			case fHourK:
				hour = int(n) % 24
			case fHour12:
				hour = int(n) % 12
				ampm = true
			case fMinute:
				minute = int(n)
			case fSecond:
				sec = int(n)
			case fFraction:
				for k := nd; k < 6; k++ {
					n *= 10
				}
				for k := nd; k > 6; k-- {
					n /= 10
				}
				frac = n
			}
			continue
		}
		switch t.f {
		case fMonth:
			if t.width >= 3 {
				found := false
				for k, name := range monthNames {
					cand := name
					if t.width == 3 {
						cand = name[:3]
					}
					if len(s)-i >= len(cand) && strings.EqualFold(s[i:i+len(cand)], cand) {
						m = k + 1
						i += len(cand)
						found = true
						break
					}
				}
				if !found {
					return bad()
				}
				continue
			}
			start := i
			n := 0
			maxW := 2
			for i < len(s) && i-start < maxW && s[i] >= '0' && s[i] <= '9' {
				n = n*10 + int(s[i]-'0')
				i++
			}
			adjacent := ti+1 < len(f) && f[ti+1].numeric()
			if i == start || (adjacent && t.width == 2 && i-start != 2) {
				return bad()
			}
			m = n
		case fDayName:
			found := false
			for _, name := range dayNames {
				cand := name
				if t.width < 4 {
					cand = name[:3]
				}
				if len(s)-i >= len(cand) && strings.EqualFold(s[i:i+len(cand)], cand) {
					i += len(cand)
					found = true
					break
				}
			}
			if !found {
				return bad()
			}
		case fAmPm:
			if len(s)-i < 2 {
				return bad()
			}
			switch strings.ToUpper(s[i : i+2]) {
			case "AM":
			case "PM":
				pm = true
			default:
				return bad()
			}
			ampm = true
			i += 2
		case fEra:
			if len(s)-i < 2 {
				return bad()
			}
			i += 2
		case fZoneX, fZoneZ:
			ts := tscanZone(s[i:])
			if ts.n == 0 {
				return bad()
			}
			offset = ts.off
			zoned = true
			i += ts.n
		case fZoneName:
			j := i
			for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z') {
				j++
			}
			if s[i:j] != "UTC" && s[i:j] != "GMT" && s[i:j] != "Z" {
				return bad()
			}
			zoned = true
			i = j
		}
	}
	if i != len(s) {
		return bad()
	}
	if ampm && pm {
		hour += 12
	}
	// Years 0000 to 9999 only, the range of Flink's date/time types.
	if m < 1 || m > 12 || hour > 23 || minute > 59 || sec > 59 || y < 0 || y > 9999 || doy > 366 {
		return bad()
	}
	var days int64
	if doy > 0 {
		days = types.DateFromCivil(y, 1, 1) + int64(doy-1)
	} else {
		if d < 1 || d > types.DaysInMonth(y, m) {
			return bad()
		}
		days = types.DateFromCivil(y, m, d)
	}
	micros = days*types.MicrosPerDay + int64(hour)*types.MicrosPerHour + int64(minute)*types.MicrosPerMinute +
		int64(sec)*types.MicrosPerSecond + frac
	if !types.TimestampInRange(micros - offset) {
		return bad()
	}
	return micros - offset, zoned, nil
}

type zoneScan struct {
	off int64
	n   int
}

// tscanZone reads Z, +hh, +hhmm or +hh:mm at the start of s.
func tscanZone(s string) zoneScan {
	if s == "" {
		return zoneScan{}
	}
	if s[0] == 'Z' {
		return zoneScan{n: 1}
	}
	if s[0] != '+' && s[0] != '-' {
		return zoneScan{}
	}
	digit := func(i int) (int64, bool) {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return int64(s[i] - '0'), true
		}
		return 0, false
	}
	h1, ok1 := digit(1)
	h2, ok2 := digit(2)
	if !ok1 || !ok2 {
		return zoneScan{}
	}
	n := 3
	mins := int64(0)
	j := 3
	if j < len(s) && s[j] == ':' {
		j++
	}
	if m1, ok := digit(j); ok {
		if m2, ok := digit(j + 1); ok {
			mins = m1*10 + m2
			n = j + 2
		}
	}
	off := (h1*10+h2)*types.MicrosPerHour + mins*types.MicrosPerMinute
	if s[0] == '-' {
		off = -off
	}
	return zoneScan{off: off, n: n}
}

// ParseWithPattern parses s with a Java date and time pattern (see the
// letters above) into microseconds since the epoch of the wall-clock time
// it reads; fields the pattern lacks are those of 1970-01-01 00:00:00. It
// is how Flink's partition time extractor reads a partition's time with
// 'partition.time-extractor.timestamp-formatter'.
func ParseWithPattern(pattern, s string) (int64, error) {
	f, err := parseDateFormat(pattern)
	if err != nil {
		return 0, err
	}
	micros, _, err := f.parse(s)
	return micros, err
}
