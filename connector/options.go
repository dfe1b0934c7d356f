package connector

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/internal/suggest"
)

// Options are a table's WITH options.
type Options map[string]string

// String returns the option's value or def.
func (o Options) String(key, def string) string {
	if v, ok := o[key]; ok {
		return v
	}
	return def
}

// Required returns the option's value or an error naming it.
func (o Options) Required(key string) (string, error) {
	v, ok := o[key]
	if !ok || v == "" {
		return "", fmt.Errorf("missing required option '%s'", key)
	}
	return v, nil
}

// Int returns the option as an integer or def.
func (o Options) Int(key string, def int64) (int64, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("option '%s': cannot parse %q as an integer", key, redact.Option(key, v))
	}
	return n, nil
}

// Float returns the option as a number or def.
func (o Options) Float(key string, def float64) (float64, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, fmt.Errorf("option '%s': cannot parse %q as a number", key, redact.Option(key, v))
	}
	return f, nil
}

// Bool returns the option as a boolean or def.
func (o Options) Bool(key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option '%s': expected true or false, got %q", key, redact.Option(key, v))
}

// Duration returns the option as a duration or def. It accepts Flink's
// forms ("5 s", "5s", "100 ms", "1 min", "2 h", "1 d", a bare number of
// milliseconds) and Go's ("1m30s"); see ParseDuration.
func (o Options) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		if redact.SecretKey(key) {
			return 0, fmt.Errorf("option '%s': cannot parse %q as a duration", key, redact.Mask)
		}
		return 0, fmt.Errorf("option '%s': %w", key, err)
	}
	return d, nil
}

// PositiveDuration returns the option as a duration or def, as Duration
// does, and an error if it is not above zero.
func (o Options) PositiveDuration(key string, def time.Duration) (time.Duration, error) {
	d, err := o.Duration(key, def)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("option '%s' must be positive", key)
	}
	return d, nil
}

// ParseDuration parses a duration in Flink's notation (a number, a unit
// after it with or without a space, milliseconds without one: "10 s",
// "10s", "1 min", "100") or Go's ("1m30s"), fractions allowed ("1.5 s").
// A sign is refused in either, as Flink's TimeUtils.parseDuration
// refuses it: "-1 s" and "-1s" alike, rather than one of them being a
// negative duration that an option's range check may not expect.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	if t != "" && (t[0] == '-' || t[0] == '+') {
		if t[0] == '-' {
			return 0, fmt.Errorf("cannot parse duration %q: a duration cannot be negative", s)
		}
		return 0, fmt.Errorf("cannot parse duration %q: write it without a sign (e.g. '10 s')", s)
	}
	if d, err := time.ParseDuration(t); err == nil {
		return d, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse duration %q", s)
	}
	var mult time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		mult = time.Millisecond
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		mult = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		mult = time.Nanosecond
	case "s", "sec", "secs", "second", "seconds":
		mult = time.Second
	case "min", "mins", "minute", "minutes":
		mult = time.Minute
	case "h", "hour", "hours":
		mult = time.Hour
	case "d", "day", "days":
		mult = 24 * time.Hour
	default:
		return 0, fmt.Errorf("cannot parse duration %q: unknown unit %q", s, unit)
	}
	ns := f * float64(mult)
	if ns >= math.MaxInt64 {
		return 0, fmt.Errorf("cannot parse duration %q: longer than 106751 days (about 292 years), the longest there is", s)
	}
	return time.Duration(ns), nil
}

// MemorySize returns the option as a number of bytes (ParseMemorySize),
// or def.
func (o Options) MemorySize(key string, def int64) (int64, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	n, err := ParseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("option '%s': %w", key, err)
	}
	return n, nil
}

// ParseMemorySize parses a size in Flink's notation: a whole number with
// an optional unit (b, kb, mb, gb, tb, or k, m, g, t; powers of 1024).
func ParseMemorySize(v string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	var mult int64
	switch strings.TrimSpace(t[i:]) {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("cannot parse %q as a size (e.g. '64 mb')", v)
	}
	if i == 0 {
		return 0, fmt.Errorf("cannot parse %q as a size (e.g. '64 mb')", v)
	}
	var n int64
	for _, c := range t[:i] {
		n = n*10 + int64(c-'0')
		if n > 1<<62/mult {
			return 0, fmt.Errorf("size %q is too large", v)
		}
	}
	return n * mult, nil
}

// WithPrefix returns the options whose key starts with prefix, with the
// prefix removed (e.g. "json." for format options).
func (o Options) WithPrefix(prefix string) Options {
	out := Options{}
	for k, v := range o {
		if strings.HasPrefix(k, prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// HasPrefix reports whether a key of the options starts with prefix
// (e.g. "sink." in a source table's, to say why they are refused).
func (o Options) HasPrefix(prefix string) bool {
	for k := range o {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// SharedSourceOption is the table option that, set to 'false', keeps a
// table's scans out of the readers an engine shares between jobs (see
// connector/share and the session option 'pipeline.shared-source'). The
// engine reads it, not the connector: every connector takes it.
const SharedSourceOption = "scan.shared-source"

// engineOptions are table options the engine reads, which every
// connector's CheckKnown accepts.
var engineOptions = []string{SharedSourceOption}

// CheckKnown returns an error for the first option (in sorted order) that is
// neither in known, nor starts with one of the allowed prefixes, nor is
// read by the engine for every table (SharedSourceOption), suggesting the
// nearest known key.
func (o Options) CheckKnown(what string, known []string, prefixes ...string) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		if !slices.Contains(engineOptions, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
next:
	for _, k := range keys {
		if set[k] {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				continue next
			}
		}
		return fmt.Errorf("%s: unsupported option '%s'%s", what, k, suggest.Hint(k, known))
	}
	return nil
}
