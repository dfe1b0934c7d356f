package sluice_test

import (
	"strings"
	"testing"
)

// LEFT(s, n) and RIGHT(s, n) are functions in Flink, written without
// backquotes although their names are join keywords.
func TestLeftRightFunctions(t *testing.T) {
	out, err := runSQL(t, nil, t.TempDir(), `
SELECT LEFT(s, 2) AS l, RIGHT(s, 3) AS r FROM (VALUES ('abcdef')) AS t(s);`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); strings.Join(got, "|") != "l, r|+I[ab, def]" {
		t.Errorf("got %q", got)
	}
}

// Every function SHOW FUNCTIONS lists can be called: $SUM0, Flink's
// internal name for SUM0, which SQL cannot write, is not listed.
func TestShowFunctionsListsCallable(t *testing.T) {
	out, err := runSQL(t, nil, t.TempDir(), `SHOW FUNCTIONS;`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "SUM0") || strings.Contains(out, "$") {
		t.Errorf("SHOW FUNCTIONS lists a name SQL cannot call:\n%s", out)
	}
}
