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
