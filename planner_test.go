package sluice_test

import (
	"slices"
	"strings"
	"testing"
)

const scoresDDL = `
CREATE TABLE scores (id INT, player STRING, game STRING, points INT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/scores.jsonl', 'format' = 'json');
`

func writeScores(t *testing.T, dir string) {
	writeFile(t, dir, "scores.jsonl", `{"id":1,"player":"ann","game":"chess","points":5}
{"id":2,"player":"bob","game":"chess","points":9}
{"id":3,"player":"cid","game":"chess","points":7}
{"id":4,"player":"dan","game":"chess","points":3}
{"id":5,"player":"eve","game":"go","points":8}
{"id":6,"player":"fay","game":"go","points":6}
{"id":7,"player":"gus","game":"go","points":4}
`)
}

// TestOrderByHiddenColumns: ORDER BY a column the select list leaves
// out, an expression over the select list, and an aggregate (as Flink
// allows): the rows come in that order, without the hidden columns.
func TestOrderByHiddenColumns(t *testing.T) {
	dir := t.TempDir()
	writeScores(t, dir)
	for _, c := range []struct{ query, want string }{
		{`SELECT player FROM scores ORDER BY points DESC LIMIT 3;`,
			"player\n+I[bob]\n+I[eve]\n+I[cid]"},
		{`SELECT player AS p, game FROM scores ORDER BY game DESC, points + id;`,
			"p, game\n+I[gus, go]\n+I[fay, go]\n+I[eve, go]\n+I[ann, chess]\n+I[dan, chess]\n+I[cid, chess]\n+I[bob, chess]"},
		{`SELECT game FROM scores GROUP BY game ORDER BY COUNT(*);`,
			"game\n+I[go]\n+I[chess]"},
	} {
		out, err := runSQL(t, nil, dir, scoresDDL+c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got := strings.TrimSpace(out); got != c.want {
			t.Errorf("%s\ngot\n%s\nwant\n%s", c.query, got, c.want)
		}
	}
}

// materialize applies a printed changelog (after its header line) and
// returns the rows left, sorted.
func materialize(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	live := map[string]int{}
	for _, l := range lines {
		kind, row := l[:2], l[2:]
		switch kind {
		case "+I", "+U":
			live[row]++
		case "-U", "-D":
			if live[row]--; live[row] < 0 {
				t.Fatalf("%s retracts a row not emitted:\n%s", l, out)
			}
		}
	}
	var rows []string
	for r, n := range live {
		for range n {
			rows = append(rows, r)
		}
	}
	sortStrings(rows)
	return rows
}

// TestTopNRange: rn BETWEEN 2 AND 3 (and rn = 2, rn >= 2 AND rn <= 3 over
// windows) keeps the second and third rows of each partition, as Flink's
// rank range does.
func TestTopNRange(t *testing.T) {
	dir := t.TempDir()
	writeScores(t, dir)
	for _, c := range []struct{ query, want string }{
		{`SELECT game, player, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY game ORDER BY points DESC) AS rn FROM scores
) WHERE rn BETWEEN 2 AND 3;`, "[chess, ann, 3] [chess, cid, 2] [go, fay, 2] [go, gus, 3]"},
		{`SELECT game, player FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY game ORDER BY points DESC) AS rn FROM scores
) WHERE rn = 2;`, "[chess, cid] [go, fay]"},
	} {
		out, err := runSQL(t, nil, dir, scoresDDL+c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got := strings.Join(materialize(t, out), " "); got != c.want {
			t.Errorf("%s\ngot  %s\nwant %s\nchangelog:\n%s", c.query, got, c.want, out)
		}
	}
	writeFile(t, dir, "bids.jsonl", `{"ts":"2024-01-01 00:01:00","item":"a","price":5}
{"ts":"2024-01-01 00:02:00","item":"b","price":9}
{"ts":"2024-01-01 00:03:00","item":"c","price":7}
{"ts":"2024-01-01 00:04:00","item":"d","price":3}
{"ts":"2024-01-01 00:11:00","item":"e","price":1}
{"ts":"2024-01-01 00:12:00","item":"f","price":2}
`)
	out, err := runSQL(t, nil, dir, `
CREATE TABLE bids (ts TIMESTAMP(3), item STRING, price INT, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
SELECT window_start, item, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
) WHERE rn >= 2 AND rn <= 3;`)
	if err != nil {
		t.Fatal(err)
	}
	want := "[2024-01-01 00:00:00.000, a, 3] [2024-01-01 00:00:00.000, c, 2] [2024-01-01 00:10:00.000, e, 2]"
	if got := strings.Join(materialize(t, out), " "); got != want {
		t.Errorf("window Top-N from 2:\ngot  %s\nwant %s\nchangelog:\n%s", got, want, out)
	}
}

// TestJobErrorsArePositioned: errors found when a job starts (a Top-N
// without a bound, or with too large a one; mini-batch options that do
// not go together) carry file:line:col, at the numbering function or at
// the statement that starts the job.
func TestJobErrorsArePositioned(t *testing.T) {
	dir := t.TempDir()
	writeScores(t, dir)
	for _, c := range []struct{ src, want string }{
		{scoresDDL + `SELECT player, ROW_NUMBER() OVER (PARTITION BY game ORDER BY points) FROM scores;`,
			"test.sql:4:16: ROW_NUMBER() needs a bound"},
		{scoresDDL + `SELECT * FROM (
  SELECT *, RANK() OVER (PARTITION BY game ORDER BY points) AS r FROM scores) WHERE r <= 1000000;`,
			"test.sql:5:13: Top-N with N = 1000000"},
		{`SET 'table.exec.mini-batch.enabled' = 'true';` + scoresDDL + `
SELECT game, COUNT(*) FROM scores GROUP BY game;`,
			"test.sql:5:1: cannot start the job: table.exec.mini-batch.enabled is true (test.sql:1:1): set 'table.exec.mini-batch.allow-latency' too"},
	} {
		_, err := runSQL(t, nil, dir, c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\ngot  %v\nwant %q", c.src, err, c.want)
		}
	}
}

// TestGroupByColumnsOfOneName: two columns of one name from the two sides
// of a join are two keys (and two aggregate arguments), not one.
func TestGroupByColumnsOfOneName(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", "{\"id\":1,\"k\":\"x\"}\n{\"id\":2,\"k\":\"y\"}\n{\"id\":3,\"k\":\"y\"}\n")
	writeFile(t, dir, "b.jsonl", "{\"id\":1,\"k\":\"p\"}\n{\"id\":2,\"k\":\"q\"}\n{\"id\":3,\"k\":\"p\"}\n")
	ddl := `CREATE TABLE a (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
CREATE TABLE b (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/b.jsonl', 'format' = 'json');
`
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"SELECT l.k, r.k, COUNT(*) FROM a l JOIN b r ON l.id = r.id GROUP BY l.k, r.k",
			[]string{"[x, p, 1]", "[y, p, 1]", "[y, q, 1]"}},
		{"SELECT r.k, MAX(l.k), MIN(r.k) FROM a l JOIN b r ON l.id = r.id GROUP BY r.k",
			[]string{"[p, y, p]", "[q, y, q]"}},
		{"SELECT l.k, r.k, GROUPING(l.k), GROUPING(r.k), COUNT(*) FROM a l JOIN b r ON l.id = r.id GROUP BY ROLLUP (l.k, r.k)",
			[]string{"[null, null, 1, 1, 3]", "[x, null, 0, 1, 1]", "[x, p, 0, 0, 1]", "[y, null, 0, 1, 2]", "[y, p, 0, 0, 1]", "[y, q, 0, 0, 1]"}},
	} {
		out, err := runSQL(t, nil, dir, ddl+c.query+";")
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got := finalRows(t, out); !slices.Equal(got, c.want) {
			t.Errorf("%s\ngot  %q\nwant %q", c.query, got, c.want)
		}
	}
}
