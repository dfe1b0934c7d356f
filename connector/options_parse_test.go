package connector_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5 s": 5 * time.Second, "5s": 5 * time.Second, "100 ms": 100 * time.Millisecond, "100": 100 * time.Millisecond,
		"1 min": time.Minute, "2 h": 2 * time.Hour, "1 d": 24 * time.Hour, "1m30s": 90 * time.Second, "1.5 s": 1500 * time.Millisecond,
		"106751 d": 106751 * 24 * time.Hour,
	} {
		got, err := connector.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// A duration that does not fit (about 292 years) is an error, not a
	// negative or wrapped duration.
	for _, in := range []string{"1000000 d", "9223372036854775807 s", "99999999999999999999", "3000000 h"} {
		got, err := connector.ParseDuration(in)
		if err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Errorf("ParseDuration(%q) = %v, %v; want an error saying it is too long", in, got, err)
		}
	}
}

// TestParseDurationSign: a sign is refused whether a space separates the
// number from its unit or not, as Flink's TimeUtils.parseDuration reads
// digits only ("-1 s" once failed while "-1s", read by Go's parser, was
// a negative duration).
func TestParseDurationSign(t *testing.T) {
	for in, want := range map[string]string{
		"-1s": "a duration cannot be negative", "-1 s": "a duration cannot be negative",
		"-1": "a duration cannot be negative", " -10 min ": "a duration cannot be negative",
		"-0s": "a duration cannot be negative", "-1.5 s": "a duration cannot be negative",
		"-1m30s": "a duration cannot be negative",
		"+1s":    "write it without a sign", "+1 s": "write it without a sign",
	} {
		got, err := connector.ParseDuration(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+in+`"`) {
			t.Errorf("ParseDuration(%q) = %v, %v; want an error quoting it and saying %q", in, got, err, want)
		}
	}
	// The same durations without the sign parse alike with or without the
	// space.
	for _, pair := range [][2]string{{"1s", "1 s"}, {"10min", "10 min"}, {"1.5s", "1.5 s"}, {"2h", "2 h"}, {"100ms", "100 ms"}} {
		a, errA := connector.ParseDuration(pair[0])
		b, errB := connector.ParseDuration(pair[1])
		if errA != nil || errB != nil || a != b {
			t.Errorf("ParseDuration(%q) = %v, %v; ParseDuration(%q) = %v, %v", pair[0], a, errA, pair[1], b, errB)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "19": 19, "19 b": 19, "64 mb": 64 << 20, "64mb": 64 << 20, "1 k": 1 << 10, "2 GB": 2 << 30, "3 tb": 3 << 40,
	} {
		if got, err := connector.ParseMemorySize(in); err != nil || got != want {
			t.Errorf("ParseMemorySize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"": "cannot parse", "mb": "cannot parse", "12 parsecs": "cannot parse", "-1": "cannot parse", "1.5 gb": "cannot parse",
		"99999999999 gb": "too large",
	} {
		if _, err := connector.ParseMemorySize(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMemorySize(%q): %v, want %q", in, err, want)
		}
	}
}
