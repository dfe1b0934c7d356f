// Package interop_test checks Sluice against the real services of the
// machine. It runs only when asked (.ci/run asks):
//
//	SLUICE_PG_DSN=postgres://postgres@127.0.0.1:5432/test go test -count=1 ./test/interop
package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicesql/sluice"
)

// queries are run by both Sluice and PostgreSQL over the same tables:
// a(k INT, x TEXT, v INT) and b(k INT, y TEXT). The updating ones give
// Sluice a changelog, applied to a multiset before the comparison.
var queries = []string{
	"SELECT a.k, a.x, b.k, b.y FROM a JOIN b ON a.k = b.k",
	"SELECT a.k, a.x, b.y FROM a JOIN b ON a.k = b.k AND a.x < b.y",
	"SELECT a.k, a.x, b.k, b.y FROM a LEFT JOIN b ON a.k = b.k AND a.x < b.y",
	"SELECT a.k, a.x, b.k, b.y FROM a RIGHT JOIN b ON a.k = b.k AND b.y <> 'c'",
	"SELECT a.k, a.x, b.k, b.y FROM a FULL OUTER JOIN b ON a.k = b.k AND a.v > 2",
	"SELECT a.x, b.y FROM a LEFT JOIN b ON a.k = b.k WHERE a.v > 1 AND b.y IS NULL",
	"SELECT k, COUNT(*), SUM(v), MIN(x), MAX(v) FROM a GROUP BY k",
	"SELECT x, COUNT(DISTINCT k) FROM a GROUP BY x",
	// Top-N: rows that tie on the ORDER BY are equal rows here, so the
	// numbers they get cannot differ between the two.
	"SELECT k, x, v, rn FROM (SELECT k, x, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, x) AS rn FROM a) t WHERE rn <= 2",
	"SELECT x, v FROM (SELECT x, v, ROW_NUMBER() OVER (PARTITION BY x ORDER BY v, k NULLS FIRST) AS rn FROM a WHERE v IS NOT NULL) t WHERE rn = 1",
	// Top-N over an updating input (a GROUP BY): retractions bring rows back.
	"SELECT k, n, rn FROM (SELECT k, n, ROW_NUMBER() OVER (ORDER BY n DESC, k NULLS FIRST) AS rn FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) g) t WHERE rn <= 3",
	// IN and EXISTS: SEMI and ANTI joins.
	"SELECT a.k, a.x FROM a WHERE a.k IN (SELECT b.k FROM b WHERE b.y <> 'c')",
	"SELECT a.k, a.x, a.v FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE b.k = a.k AND b.y > a.x)",
	"SELECT k, x FROM a WHERE EXISTS (SELECT * FROM b WHERE b.k = a.k) AND v > 1",
	"SELECT a.k, a.x FROM a WHERE a.v + 1 IN (SELECT b.k FROM b) AND NOT EXISTS (SELECT * FROM b WHERE b.k = a.k AND b.y > a.x)",
	// Grouping sets over NULL keys: GROUPING tells a NULL of the data
	// from the NULL of a set that leaves the column out.
	"SELECT k, x, GROUPING(k), GROUPING(x), COUNT(*), SUM(v), MIN(x) FROM a GROUP BY ROLLUP (k, x)",
	"SELECT k, x, GROUPING(k, x), COUNT(v), MAX(k) FROM a GROUP BY CUBE (k, x)",
	"SELECT k, v, x, COUNT(*), COUNT(DISTINCT x) FROM a GROUP BY GROUPING SETS ((k, v), (x), (), (v))",
	"SELECT x, k, v, GROUPING(v, k), COUNT(*) FROM a GROUP BY x, ROLLUP (k, v) HAVING GROUPING(k) = 1 OR COUNT(*) > 1",
	"SELECT k, SUM(v) FILTER (WHERE x > 'b'), COUNT(*) FROM a WHERE v > 0 GROUP BY GROUPING SETS ((k), (x), ())",
	// A set given twice (here by the cross product) gives its rows twice.
	"SELECT k, x, COUNT(*) FROM a GROUP BY ROLLUP (k), ROLLUP (k, x)",
	"SELECT k, COUNT(*) FROM a GROUP BY GROUPING SETS ((k), (k), ())",
	// Grouping sets over an updating input: retractions through every set.
	"SELECT n, COUNT(*), SUM(k), GROUPING(n) FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) g GROUP BY ROLLUP (n)",
	"SELECT a.k, b.y, COUNT(*) FROM a LEFT JOIN b ON a.k = b.k AND a.x < b.y GROUP BY CUBE (a.k, b.y)",
	// Set operations: NULL keys and duplicate rows on both sides.
	"SELECT k, x FROM a UNION SELECT k, y FROM b",
	"SELECT k FROM a UNION SELECT k FROM b UNION ALL SELECT v FROM a",
	"SELECT k FROM a UNION ALL SELECT k FROM b UNION SELECT v FROM a",
	"SELECT k, x FROM a INTERSECT SELECT k, y FROM b",
	"SELECT k, x FROM a INTERSECT ALL SELECT k, y FROM b",
	"SELECT k, x FROM a EXCEPT SELECT k, y FROM b",
	"SELECT k, x FROM a EXCEPT ALL SELECT k, y FROM b",
	"SELECT k FROM b EXCEPT ALL SELECT k FROM a",
	"SELECT k FROM a EXCEPT SELECT k FROM b INTERSECT SELECT v FROM a",
	"SELECT x, COUNT(*) FROM (SELECT k, x FROM a INTERSECT ALL SELECT k, y FROM b) t GROUP BY x",
	// ... over updating inputs (GROUP BYs): retractions on both sides.
	"SELECT k, COUNT(*) FROM a GROUP BY k EXCEPT SELECT k, COUNT(*) FROM b GROUP BY k",
	"SELECT k, MAX(x) FROM a GROUP BY k INTERSECT ALL SELECT k, MIN(y) FROM b GROUP BY k",
	"SELECT x, COUNT(*) FROM a GROUP BY x EXCEPT ALL SELECT y, COUNT(*) FROM b GROUP BY y",
	"SELECT k FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) t WHERE n > 3 UNION SELECT k FROM b WHERE y = 'a'",
	// NOT IN, null-aware: a NULL in the subquery leaves no row, a NULL on
	// the left no row when the subquery has any.
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT b.k FROM b)",
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE b.k IS NOT NULL AND b.k < 4)",
	"SELECT a.k, a.x, a.v FROM a WHERE a.v NOT IN (SELECT b.k FROM b WHERE b.y = 'a' AND (b.k IS NULL OR b.k > 3))",
	"SELECT a.k, a.x, a.v FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE b.y = 'b' OR b.k > 5)",
	"SELECT a.k, a.x, a.v FROM a WHERE a.v NOT IN (SELECT b.k FROM b WHERE b.y = a.x)",
	"SELECT a.k, a.x, a.v FROM a WHERE a.v NOT IN (SELECT b.k FROM b WHERE b.k IS NOT NULL AND b.y = a.x AND b.k < 3)",
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE b.y = 'zz')",
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE b.y = a.x AND b.k <> 1)",
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT m.k FROM (SELECT k, COUNT(*) AS n FROM b GROUP BY k) m WHERE m.n > 3)",
	"SELECT a.k, a.x FROM a WHERE a.x NOT IN (SELECT m.y FROM (SELECT k, MAX(y) AS y FROM b GROUP BY k) m WHERE m.k > 2)",
	// IN and NOT IN of a set operation.
	"SELECT a.k, a.x FROM a WHERE a.k IN (SELECT k FROM b WHERE y = 'a' UNION SELECT v FROM a WHERE x = 'b')",
	"SELECT a.k, a.x FROM a WHERE a.k NOT IN (SELECT k FROM b WHERE k IS NOT NULL INTERSECT SELECT v FROM a)",
	"SELECT a.k, a.x FROM a WHERE a.v NOT IN (SELECT k FROM b WHERE y < 'c' EXCEPT ALL SELECT k FROM b WHERE y > 'b')",
	"SELECT a.k, a.x, a.v FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE b.y > a.x) AND a.v > 1",
}

// windowQueries are window joins, in Sluice over wa and wb (a and b with
// an event time: v minutes into 2020 for a, k (or 0) minutes for b), and
// their equivalent in PostgreSQL, which joins on the window number
// (minutes / size) instead.
var windowQueries = []struct{ sluice, pg string }{
	{`SELECT l.k, l.x, l.v, r.y
FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) l
JOIN TABLE(TUMBLE(TABLE wb, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) r
  ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k`,
		"SELECT a.k, a.x, a.v, b.y FROM a JOIN b ON a.k = b.k AND a.v / 2 = COALESCE(b.k, 0) / 2"},
	{`SELECT l.k, l.x, r.k, r.y
FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '3' MINUTES)) l
FULL JOIN TABLE(TUMBLE(TABLE wb, DESCRIPTOR(ts), INTERVAL '3' MINUTES)) r
  ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k AND l.x < r.y`,
		"SELECT a.k, a.x, b.k, b.y FROM a FULL JOIN b ON a.k = b.k AND a.v / 3 = COALESCE(b.k, 0) / 3 AND a.x < b.y"},
	{`SELECT l.k, l.x, l.v FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) l
WHERE l.x IN (SELECT y FROM TABLE(TUMBLE(TABLE wb, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) r
              WHERE l.window_start = r.window_start AND l.window_end = r.window_end)`,
		"SELECT a.k, a.x, a.v FROM a WHERE a.x IN (SELECT b.y FROM b WHERE a.v / 2 = COALESCE(b.k, 0) / 2)"},
	{`SELECT l.k, l.x, l.v FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) l
WHERE NOT EXISTS (SELECT * FROM TABLE(TUMBLE(TABLE wb, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) r
                  WHERE l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k AND r.y > l.x)`,
		"SELECT a.k, a.x, a.v FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE a.v / 2 = COALESCE(b.k, 0) / 2 AND a.k = b.k AND b.y > a.x)"},
	// Window aggregations of grouping sets: PostgreSQL groups by the window
	// number beside the sets. GROUPING_ID is PostgreSQL's GROUPING of
	// several arguments.
	{`SELECT TIMESTAMPDIFF(MINUTE, TIMESTAMP '2020-01-01 00:00:00', window_start) AS w, k, x,
  GROUPING_ID(k, x), COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '2' MINUTES))
GROUP BY window_start, window_end, ROLLUP (k, x)`,
		"SELECT a.v / 2 * 2 AS w, k, x, GROUPING(k, x), COUNT(*), SUM(v) FROM a GROUP BY a.v / 2, ROLLUP (k, x)"},
	{`SELECT TIMESTAMPDIFF(MINUTE, TIMESTAMP '2020-01-01 00:00:00', window_start) AS w, k, x, MAX(k), COUNT(*)
FROM TABLE(HOP(TABLE wa, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '2' MINUTES))
GROUP BY window_start, window_end, CUBE (k, x)`,
		`SELECT w, k, x, MAX(k), COUNT(*) FROM (SELECT v - 1 AS w, k, x FROM a UNION ALL SELECT v AS w, k, x FROM a) h
GROUP BY w, CUBE (k, x)`},
	// NOT IN per window, null-aware: a window whose right rows have a
	// NULL k keeps none of its left rows.
	{`SELECT l.k, l.x, l.v FROM TABLE(TUMBLE(TABLE wa, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) l
WHERE l.k NOT IN (SELECT r.k FROM TABLE(TUMBLE(TABLE wb, DESCRIPTOR(ts), INTERVAL '2' MINUTES)) r
                  WHERE l.window_start = r.window_start AND l.window_end = r.window_end AND r.y <> 'c')`,
		"SELECT a.k, a.x, a.v FROM a WHERE a.k NOT IN (SELECT b.k FROM b WHERE a.v / 2 = COALESCE(b.k, 0) / 2 AND b.y <> 'c')"},
}

// TestConsistencyWithPostgres runs every query over random tables (NULL
// keys, duplicate rows, skewed keys) in Sluice, from JSON files, and in
// PostgreSQL, and compares the final results as multisets of rows.
func TestConsistencyWithPostgres(t *testing.T) {
	ctx, conn := postgres(t)

	compared := 0
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 99))
		dir := t.TempDir()
		a, b := genTable(rng, 3, 60+rng.IntN(100)), genTable(rng, 2, 60+rng.IntN(100))
		writeJSON(t, filepath.Join(dir, "a.jsonl"), a, []string{"k", "x", "v"})
		writeJSON(t, filepath.Join(dir, "b.jsonl"), b, []string{"k", "y"})
		load(t, ctx, conn, "a", "k INT, x TEXT COLLATE \"C\", v INT", a)
		load(t, ctx, conn, "b", "k INT, y TEXT COLLATE \"C\"", b)
		pairs := windowQueries
		for _, q := range queries {
			pairs = append(pairs, struct{ sluice, pg string }{q, q})
		}
		for _, q := range pairs {
			want := pgRows(t, ctx, conn, q.pg)
			got := sluiceRows(t, dir, q.sluice, seed)
			for _, n := range want {
				compared += n
			}
			if d := diff(want, got); d != "" {
				t.Errorf("seed %d: %s\n(- PostgreSQL, + Sluice)\n%s", seed, q.sluice, d)
			}
		}
	}
	t.Logf("%d queries over 6 pairs of tables: %d result rows compared", len(queries)+len(windowQueries), compared)
}

// postgres connects to the PostgreSQL that SLUICE_PG_DSN names, for the
// rest of the test, or skips the test without it.
func postgres(t *testing.T) (context.Context, *pgx.Conn) {
	t.Helper()
	dsn := os.Getenv("SLUICE_PG_DSN")
	if dsn == "" {
		t.Skip("set SLUICE_PG_DSN (e.g. postgres://postgres@127.0.0.1:5432/test) to compare with PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("cannot connect to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return ctx, conn
}

// genTable returns n rows of cols columns: an INT key (NULL now and then,
// a few hot values), a one-letter TEXT, and for three columns an INT.
func genTable(rng *rand.Rand, cols, n int) [][]any {
	var rows [][]any
	for range n {
		var k any = rng.IntN(8)
		if rng.IntN(12) == 0 {
			k = nil
		} else if rng.IntN(3) == 0 {
			k = 1 // a hot key
		}
		row := []any{k, string(rune('a' + rng.IntN(5)))}
		if cols == 3 {
			row = append(row, rng.IntN(5))
		}
		rows = append(rows, row)
		if rng.IntN(10) == 0 {
			rows = append(rows, row) // a duplicate
		}
	}
	return rows
}

func writeJSON(t *testing.T, path string, rows [][]any, cols []string) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		b.WriteByte('{')
		for i, c := range cols {
			if i > 0 {
				b.WriteByte(',')
			}
			switch v := r[i].(type) {
			case nil:
				fmt.Fprintf(&b, "%q:null", c)
			case string:
				fmt.Fprintf(&b, "%q:%q", c, v)
			default:
				fmt.Fprintf(&b, "%q:%v", c, v)
			}
		}
		b.WriteString("}\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, ctx context.Context, conn *pgx.Conn, name, cols string, rows [][]any) {
	t.Helper()
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TEMPORARY TABLE %s (%s)", name, name, cols)); err != nil {
		t.Fatal(err)
	}
	names := []string{"k", "x", "v"}
	if name == "b" {
		names = []string{"k", "y"}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{name}, names, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

// pgRows runs q and formats each row as Sluice's print sink does.
func pgRows(t *testing.T, ctx context.Context, conn *pgx.Conn, q string) map[string]int {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("PostgreSQL: %s: %v", q, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if v == nil {
				parts = append(parts, "null")
			} else {
				parts = append(parts, fmt.Sprint(v))
			}
		}
		out["["+strings.Join(parts, ", ")+"]"]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sluiceRows runs q in a Sluice engine over the JSON files and applies its
// changelog (+I/+U add a row, -U/-D take one away).
func sluiceRows(t *testing.T, dir, q string, seed uint64) map[string]int {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := fmt.Sprintf(`
SET 'parallelism.default' = '%[1]d';
CREATE TABLE a (k INT, x STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'json');
CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'json');
CREATE TABLE wa (k INT, x STRING, v INT, ts AS TIMESTAMPADD(MINUTE, v, TIMESTAMP '2020-01-01 00:00:00.000'),
  WATERMARK FOR ts AS ts - INTERVAL '1' DAY) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'json');
CREATE TABLE wb (k INT, y STRING, ts AS TIMESTAMPADD(MINUTE, COALESCE(k, 0), TIMESTAMP '2020-01-01 00:00:00.000'),
  WATERMARK FOR ts AS ts - INTERVAL '1' DAY) WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'json');
%[4]s;`, 1+seed%3, filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), q)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Run(ctx, "q.sql", []byte(src)); err != nil {
		t.Fatalf("Sluice: %s", sluice.FormatError(err, []byte(src)))
	}
	return applyChangelog(t, out.String())
}

func diff(want, got map[string]int) string {
	var out []string
	for k, n := range want {
		if got[k] != n {
			out = append(out, fmt.Sprintf("%s: PostgreSQL %d, Sluice %d", k, n, got[k]))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: PostgreSQL 0, Sluice %d", k, n))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
