package sluice_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sql/token"
)

// fuzzPreamble declares the tables the fuzzed statements may use besides
// their own. Its names differ from those the seed files create, so that a
// seed's DDL does not fail on a name already taken.
const fuzzPreamble = `
CREATE TABLE ev (
  ts TIMESTAMP(3),
  user_id BIGINT,
  kind STRING,
  amount DECIMAL(12, 3),
  score DOUBLE,
  ok BOOLEAN,
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>,
  info ROW<city STRING, zip INT>,
  d DATE,
  tm TIME(3),
  ltz TIMESTAMP_LTZ(3),
  raw BYTES,
  pt AS PROCTIME(),
  cents AS CAST(amount * 100 AS BIGINT),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'ev.jsonl', 'format' = 'json');
CREATE TABLE dim (id BIGINT, name STRING, tier INT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE clicks (url STRING, user_id BIGINT, pt AS PROCTIME())
WITH ('connector' = 'datagen', 'rows-per-second' = '5');
CREATE TABLE out_json (a STRING, n BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');
CREATE TABLE sink_print (a STRING, n BIGINT) WITH ('connector' = 'print');
`

// fuzzSeeds are statements over the preamble's tables, reaching planner
// paths that the seed files do not.
var fuzzSeeds = []string{
	`SELECT kind, COUNT(*), SUM(amount), AVG(score) FILTER (WHERE ok) FROM ev GROUP BY kind HAVING COUNT(*) > 1;`,
	`INSERT INTO out_json SELECT kind, COUNT(DISTINCT user_id) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, kind;`,
	`INSERT INTO sink_print SELECT kind, COUNT(*) FROM ev GROUP BY kind;`,
	`SELECT e.kind, d.name FROM ev AS e JOIN dim FOR SYSTEM_TIME AS OF e.pt AS d ON e.user_id = d.id;`,
	`SELECT c.url, d.tier FROM clicks c LEFT JOIN dim d ON c.user_id = d.id WHERE d.tier IS NOT NULL;`,
	`SELECT tags[1], attrs['x'], info.city, CARDINALITY(tags) FROM ev WHERE info.zip BETWEEN 1 AND 99999;`,
	`SELECT kind, tag FROM ev CROSS JOIN UNNEST(tags) AS u(tag);`,
	`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY kind ORDER BY amount DESC) AS rn FROM ev) WHERE rn <= 3;`,
	`SELECT CASE WHEN score > 1 THEN 'a' WHEN score IS NULL THEN NULL ELSE 'b' END, CAST(d AS STRING), TRY_CAST(kind AS INT) FROM ev;`,
	`SELECT DATE_FORMAT(ts, 'yyyy-MM-dd'), EXTRACT(HOUR FROM ts), TIMESTAMPDIFF(SECOND, ts, ts + INTERVAL '1' HOUR), FLOOR(ts TO MINUTE) FROM ev;`,
	`SELECT window_start, kind, MAX(amount) FROM TABLE(HOP(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' MINUTE, SIZE => INTERVAL '5' MINUTE)) GROUP BY window_start, window_end, kind;`,
	`SELECT window_start, window_end, kind, COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY kind, DESCRIPTOR(ts), INTERVAL '30' SECOND)) GROUP BY window_start, window_end, kind;`,
	`SELECT TUMBLE_START(pt, INTERVAL '10' SECOND), COUNT(*) FROM clicks GROUP BY TUMBLE(pt, INTERVAL '10' SECOND);`,
	`SELECT kind FROM ev UNION SELECT url FROM clicks INTERSECT SELECT name FROM dim;`,
	`CREATE VIEW v AS SELECT kind, amount FROM ev WHERE kind LIKE 'a%' ESCAPE '!'; SELECT * FROM v ORDER BY amount LIMIT 5;`,
	`SET 'table.local-time-zone' = 'Europe/Berlin'; SELECT ltz, CAST(ltz AS TIMESTAMP(3)) FROM ev;`,
	`EXECUTE STATEMENT SET BEGIN INSERT INTO out_json SELECT kind, user_id FROM ev; INSERT INTO sink_print SELECT url, user_id FROM clicks; END;`,
	`EXPLAIN SELECT kind, LISTAGG(kind, ',') FROM ev GROUP BY kind;`,
	`SELECT a.kind, b.kind FROM ev a, ev b WHERE a.user_id = b.user_id AND a.ts BETWEEN b.ts - INTERVAL '1' MINUTE AND b.ts;`,
	`SELECT kind FROM ev WHERE user_id IN (SELECT id FROM dim) AND EXISTS (SELECT 1 FROM dim);`,
	`SELECT DISTINCT kind, ok FROM ev;`,
	`SELECT REGEXP_EXTRACT(kind, '([a-z]+)', 1), JSON_VALUE(kind, '$.a'), SPLIT_INDEX(kind, ',', 0) FROM ev;`,
	`DESCRIBE ev; SHOW TABLES; SHOW FUNCTIONS; DROP TABLE IF EXISTS nope;`,
	`SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '9999999999999' DAY)) GROUP BY window_start, window_end;`,
	`SELECT window_start FROM TABLE(CUMULATE(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), STEP => INTERVAL '1' MINUTE, SIZE => INTERVAL '3' MINUTE, OFFSET => INTERVAL '-20' SECOND)) GROUP BY window_start, window_end;`,
	`SELECT HOP_END(ts, INTERVAL '1' SECOND, INTERVAL '0' SECOND) FROM ev GROUP BY HOP(ts, INTERVAL '1' SECOND, INTERVAL '0' SECOND);`,
	`SELECT SESSION_START(ts, INTERVAL '1' SECOND), kind FROM ev GROUP BY SESSION(ts, INTERVAL '1' SECOND), kind HAVING COUNT(*) > 1;`,
	`SELECT CAST(amount AS DECIMAL(38, 38)), CAST(ts AS TIMESTAMP(9)), CAST(kind AS CHAR(1)), CAST(raw AS VARBINARY(3)) FROM ev;`,
	`SELECT INTERVAL '1 23:59:59.999' DAY TO SECOND, ts + INTERVAL '1-11' YEAR TO MONTH, TIMESTAMPADD(MICROSECOND, 1, ts) FROM ev;`,
	`SELECT TIMESTAMP '2020-02-29 23:59:59.999999999', DATE '2020-02-29', TIME '23:59:59.999' FROM ev;`,
	`SELECT ROW(1, 'a'), MAP['a', 1], ARRAY[ARRAY[1]], CAST(NULL AS ROW<a INT, b ARRAY<MAP<STRING, INT>>>) FROM ev;`,
	`SELECT kind LIKE 'a!%' ESCAPE '!', kind SIMILAR TO '(a|b)*', REGEXP_REPLACE(kind, '[0-9]+', 'n') FROM ev;`,
	`SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS x(a, b) WHERE a IN (1, 2) ORDER BY 1 DESC LIMIT 1;`,
	`INSERT INTO out_json (n, a) SELECT user_id, kind FROM ev;`,
	`CREATE VIEW v1 AS SELECT * FROM ev; CREATE VIEW v2 (a, b) AS SELECT kind, user_id FROM v1; DROP VIEW v1; SELECT * FROM v2;`,
	`CREATE TABLE x (a TIMESTAMP_LTZ(3), b AS a, WATERMARK FOR a AS a - INTERVAL '1' SECOND) WITH ('connector' = 'datagen'); SELECT window_time FROM TABLE(TUMBLE(TABLE x, DESCRIPTOR(a), INTERVAL '1' SECOND));`,
	`SET 'parallelism.default' = '3'; RESET 'parallelism.default'; RESET; SET; SELECT 1;`,
}

// fuzzSeedFiles are the job files whose text seeds the corpus.
func fuzzSeedFiles(f *testing.F) []string {
	var files []string
	for _, pattern := range []string{"testdata/explain/*.sql", "testdata/e2e/*/job.sql"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatal("no seed files")
	}
	return files
}

// explainFuzz plans src in a fresh engine that holds the preamble's tables.
func explainFuzz(t *testing.T, src string) (string, error) {
	t.Helper()
	e, err := sluice.Open(sluice.Options{Stdout: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Explain("preamble.sql", []byte(fuzzPreamble)); err != nil {
		t.Fatalf("preamble: %v", err)
	}
	return e.Explain("fuzz.sql", []byte(src))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// checkPositioned fails unless err is a *token.Error or a token.ErrorList
// (or wraps one) whose every error has a line and column inside src.
func checkPositioned(t *testing.T, err error, src string) {
	t.Helper()
	var list token.ErrorList
	var one *token.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = token.ErrorList{one}
	default:
		t.Fatalf("error %T is not positioned: %v", err, err)
	}
	if len(list) == 0 {
		t.Fatalf("empty error list returned as an error: %v", err)
	}
	lines := strings.Split(src, "\n")
	for _, e := range list {
		p := e.Pos
		if p.Filename != "fuzz.sql" || p.Line < 1 || p.Line > len(lines) || p.Column < 1 || p.Column > len(lines[p.Line-1])+1 {
			t.Fatalf("error %q has a position outside the input (%d lines): %+v", e.Error(), len(lines), p)
		}
		if p.Offset < 0 || p.Offset > len(src) {
			t.Fatalf("error %q has an offset outside the input (%d bytes): %+v", e.Error(), len(src), p)
		}
	}
	if s := sluice.FormatError(err, []byte(src)); !strings.Contains(s, "fuzz.sql:") {
		t.Fatalf("formatted error lacks a position: %q", s)
	}
}

// FuzzEngineSQL plans arbitrary SQL text with Engine.Explain (no job ever
// starts) after a fixed preamble of tables. Planning must not panic, every
// error must be positioned inside the input, and planning the same text
// twice must give the same plans or the same error.
func FuzzEngineSQL(f *testing.F) {
	for _, path := range fuzzSeedFiles(f) {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		plan, err := explainFuzz(t, src)
		if err != nil {
			checkPositioned(t, err, src)
		}
		plan2, err2 := explainFuzz(t, src)
		if plan != plan2 || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("planning twice differs:\n%s%v\n--- and\n%s%v", plan, err, plan2, err2)
		}
	})
}
