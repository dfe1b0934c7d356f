package sluice_test

import (
	"strings"
	"testing"
)

// Flink plans a join bounded by PROCTIME() columns as a processing-time
// interval join (each row's time fixed as it arrives). Sluice has none: it
// refuses the join at its ON rather than run it as a regular join that
// reads the clock when it evaluates the condition.
func TestProctimeJoinConditionRefused(t *testing.T) {
	const ddl = `
CREATE TABLE a (k INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.k.min' = '1', 'fields.k.max' = '1');
CREATE TABLE b (k INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.k.min' = '1', 'fields.k.max' = '1');
`
	for _, q := range []string{
		`SELECT a.k FROM a JOIN b ON a.k = b.k AND b.pt BETWEEN a.pt - INTERVAL '5' MINUTE AND a.pt;`,
		`SELECT a.k FROM a LEFT JOIN b ON a.k = b.k AND b.pt > a.pt;`,
		`SELECT a.k FROM a, b WHERE a.k = b.k AND b.pt <= a.pt;`,
	} {
		_, err := runSQL(t, nil, t.TempDir(), ddl+q)
		if err == nil || !strings.Contains(err.Error(), "test.sql:4:") ||
			!strings.Contains(err.Error(), "a join condition over the processing-time attribute") {
			t.Errorf("%s\ngot %v", q, err)
		}
	}
}
