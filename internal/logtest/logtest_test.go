package logtest

import "testing"

func TestLines(t *testing.T) {
	var l Lines
	if got := l.String(); got != "" {
		t.Errorf("an empty log: %q", got)
	}
	l.Logf("table '%s': %d", "a", 1)
	l.Logf("second")
	if got := l.String(); got != "table 'a': 1\nsecond" {
		t.Errorf("got %q", got)
	}
}
