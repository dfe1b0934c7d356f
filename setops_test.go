package sluice_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// finalRows applies a printed changelog (a header line, then +I/+U rows
// that add a row and -U/-D rows that take one away) and returns the rows
// left, sorted.
func finalRows(t *testing.T, printed string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(printed), "\n")
	count := map[string]int{}
	for _, l := range lines[1:] {
		if len(l) < 3 {
			t.Fatalf("unexpected output line %q", l)
		}
		switch row := l[2:]; l[:2] {
		case "+I", "+U":
			count[row]++
		case "-U", "-D":
			count[row]--
		default:
			t.Fatalf("unexpected output line %q", l)
		}
	}
	var rows []string
	for r, n := range count {
		if n < 0 {
			t.Fatalf("row %s retracted more often than emitted:\n%s", r, printed)
		}
		for range n {
			rows = append(rows, r)
		}
	}
	sort.Strings(rows)
	return rows
}

// UNION removes duplicates across its inputs, not only within each: with
// t1 = a, b, c and t2 = a, b, d, e, Flink (and PostgreSQL) return 5 rows.
func TestUnionDistinctAcrossInputs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "t1.jsonl", "{\"s\":\"a\"}\n{\"s\":\"b\"}\n{\"s\":\"c\"}\n")
	writeFile(t, dir, "t2.jsonl", "{\"s\":\"a\"}\n{\"s\":\"b\"}\n{\"s\":\"d\"}\n{\"s\":\"e\"}\n")
	ddl := `
CREATE TABLE t1 (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/t1.jsonl', 'format' = 'json');
CREATE TABLE t2 (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/t2.jsonl', 'format' = 'json');
`
	want := "[a] [b] [c] [d] [e]"
	for _, q := range []string{
		"(SELECT s FROM t1) UNION (SELECT s FROM t2)",
		"SELECT s FROM t1 UNION SELECT s FROM t2",
		"SELECT s FROM t1 UNION DISTINCT SELECT s FROM t2",
		"SELECT s FROM t1 UNION SELECT s FROM t2 UNION SELECT s FROM t1",
		"SELECT s FROM t1 UNION ALL SELECT s FROM t2 UNION SELECT s FROM t2",
		"SELECT s FROM t1 UNION (SELECT s FROM t2 UNION ALL SELECT s FROM t2)",
		"SELECT * FROM (SELECT s FROM t1 UNION SELECT s FROM t2) u",
		"WITH u AS (SELECT s FROM t1 UNION SELECT s FROM t2) SELECT s FROM u",
		"SELECT DISTINCT s FROM (SELECT s FROM t1 UNION ALL SELECT s FROM t2) u",
		"SELECT s FROM (SELECT s FROM t1 UNION ALL SELECT s FROM t2) u GROUP BY s",
	} {
		for _, par := range []int{1, 3} {
			out, err := runSQL(t, nil, dir, fmt.Sprintf("%sSET 'parallelism.default' = '%d';\n%s;", ddl, par, q))
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if got := strings.Join(finalRows(t, out), " "); got != want {
				t.Errorf("%s (parallelism %d):\ngot  %s\nwant %s\nprinted:\n%s", q, par, got, want, out)
			}
		}
	}
}

// SELECT DISTINCT over more rows than one batch: each key once.
func TestDistinctAcrossBatches(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "{\"k\":%d}\n", i%3)
	}
	writeFile(t, dir, "t.jsonl", b.String())
	out, err := runSQL(t, nil, dir, `
CREATE TABLE t (k INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/t.jsonl', 'format' = 'json');
SELECT DISTINCT k FROM t;`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sortedLines(out), "\n"), "k\n+I[0]\n+I[1]\n+I[2]"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
