package jdbc_test

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// TestPlanUpdating: the engine writes an updating query into a jdbc (or
// redis) table with a PRIMARY KEY, and refuses one into a table without,
// saying that a key would do. Planning connects to nothing.
func TestPlanUpdating(t *testing.T) {
	const ddl = `
CREATE TABLE s (k INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE keyed (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:1/db', 'table-name' = 't');
CREATE TABLE plain (k INT, n BIGINT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://127.0.0.1:1/db', 'table-name' = 't');
CREATE TABLE cache (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'redis', 'host' = '127.0.0.1', 'port' = '1');
`
	explain := func(src string) (string, error) {
		e, err := sluice.Open(sluice.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		return e.Explain("q.sql", []byte(src))
	}
	for _, sink := range []string{"keyed", "cache"} {
		plan, err := explain(ddl + "INSERT INTO " + sink + " SELECT k, COUNT(*) FROM s GROUP BY k;")
		if err != nil {
			t.Fatalf("%s: %v", sink, err)
		}
		if !strings.Contains(plan, "GroupAggregate") {
			t.Errorf("%s: plan\n%s", sink, plan)
		}
	}
	src := ddl + "INSERT INTO plain SELECT k, COUNT(*) FROM s GROUP BY k;"
	_, err := explain(src)
	if err == nil || !strings.Contains(err.Error(), "doesn't support consuming update changes") ||
		!strings.Contains(err.Error(), "or declare the PRIMARY KEY of 'plain' (NOT ENFORCED): a 'jdbc' table with one upserts and deletes by it") {
		t.Fatalf("an updating query into a table without a key: %v", err)
	}
}
