package sluice_test

import (
	"strings"
	"testing"
)

// JSON_VALUE's RETURNING, ON EMPTY and ON ERROR clauses as Flink defines
// them (Calcite's JsonFunctions.jsonValue, which Flink runs): ON EMPTY
// applies when a lax path finds nothing or a JSON null (or an object or an
// array); ON ERROR when the document is malformed, a strict path finds no
// scalar, or the value does not convert to the RETURNING type. Both
// default to NULL.
func TestJSONValueClauses(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`JSON_VALUE(js, '$.a' RETURNING INT)`, "1"},
		{`JSON_VALUE(js, '$.a' RETURNING INT) + 1`, "2"},
		{`JSON_VALUE(js, '$.x' DEFAULT 'none' ON EMPTY)`, "none"},
		{`JSON_VALUE(js, '$.x' RETURNING INT DEFAULT -1 ON EMPTY)`, "-1"},
		{`JSON_VALUE(js, '$.n' DEFAULT 'was null' ON EMPTY)`, "was null"},
		{`JSON_VALUE(js, '$.o' DEFAULT 'object' ON EMPTY DEFAULT 'error' ON ERROR)`, "object"},
		{`JSON_VALUE(js, 'strict $.x' DEFAULT 'empty' ON EMPTY DEFAULT 'error' ON ERROR)`, "error"},
		{`JSON_VALUE(js, 'strict $.o' DEFAULT 'empty' ON EMPTY DEFAULT 'error' ON ERROR)`, "error"},
		{`JSON_VALUE(js, '$.s' RETURNING INT DEFAULT -2 ON ERROR)`, "-2"},
		{`JSON_VALUE(js, '$.s' RETURNING INT)`, "null"},
		{`JSON_VALUE(bad, '$.a' DEFAULT 'error' ON ERROR)`, "error"},
		{`JSON_VALUE(bad, '$.a' DEFAULT 'empty' ON EMPTY)`, "null"},
		{`JSON_VALUE(js, '$.x' NULL ON EMPTY ERROR ON ERROR)`, "null"},
	} {
		out, err := runSQL(t, nil, t.TempDir(), `
SELECT `+tc.expr+` AS v FROM (VALUES ('{"a": 1, "n": null, "o": {"b": 2}, "s": "abc"}', '{"a": 1')) AS t(js, bad);`)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := sortedLines(out); len(got) != 2 || got[1] != "+I["+tc.want+"]" {
			t.Errorf("%s: got %q, want %s", tc.expr, got, tc.want)
		}
	}
}

// ERROR ON EMPTY and ERROR ON ERROR fail the job with an error that names
// the function, as in Flink.
func TestJSONValueErrorFailsJob(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`JSON_VALUE(js, '$.x' ERROR ON EMPTY)`, "JSON_VALUE (ERROR ON EMPTY)"},
		{`JSON_VALUE(bad, '$.a' ERROR ON ERROR)`, "JSON_VALUE (ERROR ON ERROR): the document is not valid JSON"},
		{`JSON_VALUE(js, '$.s' RETURNING INT ERROR ON ERROR)`, "JSON_VALUE (ERROR ON ERROR): cannot convert 'abc' to INT"},
	} {
		_, err := runSQL(t, nil, t.TempDir(), `
SELECT `+tc.expr+` AS v FROM (VALUES ('{"a": 1, "s": "abc"}', '{"a": 1')) AS t(js, bad);`)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.expr, err, tc.want)
		}
	}
	_, err := runSQL(t, nil, t.TempDir(), `
SELECT JSON_VALUE(js, '$.a' RETURNING INT DEFAULT 'x' ON EMPTY) FROM (VALUES ('{}')) AS t(js);`)
	if err == nil || !strings.Contains(err.Error(), "2:51: cannot cast 'x' to INT") {
		t.Errorf("a DEFAULT that is not of the RETURNING type: got %v", err)
	}
}
