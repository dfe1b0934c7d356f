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
		if l == "" {
			continue
		}
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
CREATE VIEW u AS SELECT s FROM t1 UNION SELECT s FROM t2;
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
		"WITH w AS (SELECT s FROM t1 UNION SELECT s FROM t2) SELECT s FROM w",
		"SELECT s FROM u",
		"SELECT s FROM u UNION SELECT s FROM t1",
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

// Set operations and NOT IN keep their state across runs: a second run
// over appended input goes on from the first's checkpoint, and the two
// changelogs together give the result over all the input. The second
// run's NULL in b makes NOT IN drop the row the first run emitted.
func TestSetOpsResumeFromStateDir(t *testing.T) {
	first := [2]string{"x\nx\ny\nnull\n", "x\nz\n"}
	more := [2]string{"z\ny\n", "y\nnull\n"}
	for _, tc := range []struct{ q, want string }{
		{"SELECT s FROM a UNION SELECT s FROM b", "[null] [x] [y] [z]"},
		{"SELECT s FROM a INTERSECT SELECT s FROM b", "[null] [x] [y] [z]"},
		{"SELECT s FROM a EXCEPT SELECT s FROM b", ""},
		{"SELECT s FROM a INTERSECT ALL SELECT s FROM b", "[null] [x] [y] [z]"},
		{"SELECT s FROM a EXCEPT ALL SELECT s FROM b", "[x] [y]"},
		{"SELECT s FROM a WHERE s NOT IN (SELECT s FROM b)", ""},
		{"SELECT s FROM a WHERE s NOT IN (SELECT s FROM b WHERE s IS NOT NULL)", ""},
		{"SELECT s FROM b WHERE s NOT IN (SELECT s FROM a WHERE s <> 'y')", "[y]"},
	} {
		dir := t.TempDir()
		jsonl := func(vals string) string {
			var b strings.Builder
			for _, v := range strings.Fields(vals) {
				if v == "null" {
					b.WriteString("{\"s\":null}\n")
				} else {
					fmt.Fprintf(&b, "{\"s\":%q}\n", v)
				}
			}
			return b.String()
		}
		src := `SET 'state.dir' = '$DIR/state';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE a (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
CREATE TABLE b (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/b.jsonl', 'format' = 'json');
` + tc.q + ";"
		writeFile(t, dir, "a.jsonl", jsonl(first[0]))
		writeFile(t, dir, "b.jsonl", jsonl(first[1]))
		out1, err := runSQL(t, nil, dir, src)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		writeFile(t, dir, "a.jsonl", jsonl(first[0]+more[0]))
		writeFile(t, dir, "b.jsonl", jsonl(first[1]+more[1]))
		out2, err := runSQL(t, nil, dir, src)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		_, rest, _ := strings.Cut(out2, "\n") // the second header
		if got := strings.Join(finalRows(t, out1+"\n"+rest), " "); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s\nfirst run:\n%s\nsecond run:\n%s", tc.q, got, tc.want, out1, out2)
		}
	}
}

// UNION of windowed rows: each (window, s) once, whichever input has it.
func TestUnionDistinctWindowed(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "w1.jsonl", `{"ts":"2020-01-01 00:01:00","s":"a"}
{"ts":"2020-01-01 00:02:00","s":"b"}
{"ts":"2020-01-01 00:12:00","s":"a"}
`)
	writeFile(t, dir, "w2.jsonl", `{"ts":"2020-01-01 00:03:00","s":"a"}
{"ts":"2020-01-01 00:04:00","s":"c"}
{"ts":"2020-01-01 00:13:00","s":"a"}
`)
	out, err := runSQL(t, nil, dir, `
CREATE TABLE w1 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '$DIR/w1.jsonl', 'format' = 'json');
CREATE TABLE w2 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '$DIR/w2.jsonl', 'format' = 'json');
SELECT window_start, s FROM TABLE(TUMBLE(TABLE w1, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
UNION SELECT window_start, s FROM TABLE(TUMBLE(TABLE w2, DESCRIPTOR(ts), INTERVAL '10' MINUTES));`)
	if err != nil {
		t.Fatal(err)
	}
	want := "[2020-01-01 00:00:00.000, a] [2020-01-01 00:00:00.000, b] [2020-01-01 00:00:00.000, c] [2020-01-01 00:10:00.000, a]"
	if got := strings.Join(finalRows(t, out), " "); got != want {
		t.Errorf("got  %s\nwant %s\nprinted:\n%s", got, want, out)
	}
}
