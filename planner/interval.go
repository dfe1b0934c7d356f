package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// mulInterval multiplies a field by its unit, failing on overflow.
func mulInterval(n, unit int64) (int64, error) {
	if n > math.MaxInt64/unit || n < math.MinInt64/unit {
		return 0, fmt.Errorf("out of range")
	}
	return n * unit, nil
}

const (
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

// fieldLimit bounds the fields after the first of a composite interval.
var fieldLimit = map[string]int64{"HOUR": 24, "MINUTE": 60, "SECOND": 60}

var unitMicros = map[string]int64{
	"DAY": microsPerDay, "HOUR": microsPerHour, "MINUTE": microsPerMinute, "SECOND": microsPerSecond,
}

// parseInterval reads the quoted text of an interval literal with its units:
// '10' MINUTE, '1 2:03' DAY TO MINUTE, '2-10' YEAR TO MONTH, '-5.5' SECOND.
// It returns microseconds, or months when months is true.
func parseInterval(text, from, to string) (v int64, months bool, err error) {
	s := strings.TrimSpace(text)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, strings.TrimSpace(s[1:])
	} else if strings.HasPrefix(s, "+") {
		s = strings.TrimSpace(s[1:])
	}
	sign := func(x int64) int64 {
		if neg {
			return -x
		}
		return x
	}
	switch from {
	case "YEAR", "MONTH":
		if from == "YEAR" && to == "MONTH" {
			y, m, ok := strings.Cut(s, "-")
			if !ok {
				return 0, true, fmt.Errorf("expected 'years-months'")
			}
			yy, err1 := strconv.ParseInt(y, 10, 64)
			mm, err2 := strconv.ParseInt(m, 10, 64)
			if err1 != nil || err2 != nil || mm >= 12 {
				return 0, true, fmt.Errorf("expected 'years-months'")
			}
			return sign(yy*12 + mm), true, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("expected an integer")
		}
		if from == "YEAR" {
			if n, err = mulInterval(n, 12); err != nil {
				return 0, true, err
			}
		}
		return sign(n), true, nil
	}
	if to == "" {
		unit, ok := unitMicros[from]
		if !ok {
			return 0, false, fmt.Errorf("unknown unit %s", from)
		}
		if from == "SECOND" && strings.Contains(s, ".") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, false, fmt.Errorf("expected a number")
			}
			return sign(int64(f*float64(microsPerSecond) + 0.5)), false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("expected an integer")
		}
		v, err := mulInterval(n, unit)
		return sign(v), false, err
	}
	// Composite day-time: split on ' ' and ':' in unit order.
	order := []string{"DAY", "HOUR", "MINUTE", "SECOND"}
	start, end := -1, -1
	for i, u := range order {
		if u == from {
			start = i
		}
		if u == to {
			end = i
		}
	}
	if start < 0 || end < start {
		return 0, false, fmt.Errorf("invalid units %s TO %s", from, to)
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ':' })
	if len(fields) != end-start+1 {
		return 0, false, fmt.Errorf("expected %d fields", end-start+1)
	}
	var total int64
	for i, f := range fields {
		u := order[start+i]
		if u == "SECOND" && strings.Contains(f, ".") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return 0, false, fmt.Errorf("invalid seconds %q", f)
			}
			if i > 0 && (x < 0 || x >= 60) {
				return 0, false, fmt.Errorf("seconds %q out of range [0, 60)", f)
			}
			total += int64(x*float64(microsPerSecond) + 0.5)
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("invalid %s %q", strings.ToLower(u), f)
		}
		if limit := fieldLimit[u]; i > 0 && (n < 0 || n >= limit) {
			return 0, false, fmt.Errorf("%s %q out of range [0, %d)", strings.ToLower(u), f, limit)
		}
		v, err := mulInterval(n, unitMicros[u])
		if err != nil || total > math.MaxInt64-v {
			return 0, false, fmt.Errorf("out of range")
		}
		total += v
	}
	return sign(total), false, nil
}
