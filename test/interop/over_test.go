package interop_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// overQueries are OVER aggregations over t(seq, k, v, ts), in Sluice and
// in PostgreSQL. Rows of one time are peers in a RANGE frame; in a ROWS
// frame Sluice orders them by arrival, which PostgreSQL is told with seq.
// Flink's AVG of an INT is an INT (truncated), PostgreSQL's a NUMERIC, so
// PostgreSQL divides instead.
var overQueries = []struct{ sluice, pg string }{
	{
		"SELECT seq, k, v, SUM(v) OVER w, COUNT(v) OVER w, MIN(v) OVER w, MAX(v) OVER w, AVG(v) OVER w FROM t " +
			"WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
		"SELECT seq, k, v, SUM(v) OVER w, COUNT(v) OVER w, MIN(v) OVER w, MAX(v) OVER w, SUM(v) OVER w / NULLIF(COUNT(v) OVER w, 0) FROM t " +
			"WINDOW w AS (PARTITION BY k ORDER BY ts, seq ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
	},
	{
		"SELECT seq, SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w, MIN(v) OVER w FROM t " +
			"WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)",
		"SELECT seq, SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w, MIN(v) OVER w FROM t " +
			"WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)",
	},
	{
		"SELECT seq, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), " +
			"COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
		"SELECT seq, SUM(v) OVER (PARTITION BY k ORDER BY ts, seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), " +
			"COUNT(*) OVER (PARTITION BY k ORDER BY ts, seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
	},
	{
		"SELECT seq, MAX(v) OVER (PARTITION BY k ORDER BY ts), SUM(v) OVER (PARTITION BY k ORDER BY ts) FROM t WHERE v <> 3",
		"SELECT seq, MAX(v) OVER (PARTITION BY k ORDER BY ts), SUM(v) OVER (PARTITION BY k ORDER BY ts) FROM t WHERE v <> 3",
	},
	{
		"SELECT seq, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM t",
		"SELECT seq, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM t",
	},
}

// TestOverWithPostgres runs the OVER aggregations over random rows in time
// order (several rows at one time now and then, NULL values, hot keys),
// read by Sluice from a JSON file and loaded into PostgreSQL, and
// compares the results as multisets.
func TestOverWithPostgres(t *testing.T) {
	ctx, conn := postgres(t)

	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	compared := 0
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 23))
		dir := t.TempDir()
		var rows [][]any
		ms := int64(0)
		for i := range 300 + rng.IntN(300) {
			ms += int64(rng.IntN(3)) * 250 // equal times now and then
			var k any = rng.IntN(6)
			if rng.IntN(3) == 0 {
				k = 1
			}
			var v any = rng.IntN(10)
			if rng.IntN(10) == 0 {
				v = nil
			}
			rows = append(rows, []any{i, k, v, base.Add(time.Duration(ms) * time.Millisecond)})
		}
		writeTimed(t, filepath.Join(dir, "t.jsonl"), rows, []string{"seq", "k", "v", "ts"})
		loadTable(t, ctx, conn, "t", "seq INT, k INT, v INT, ts TIMESTAMP", []string{"seq", "k", "v", "ts"}, rows)
		for _, q := range overQueries {
			want := pgRows(t, ctx, conn, q.pg)
			// The watermark trails by 1 ms, so that a row at the time of
			// the one before it is not late.
			got := runSluice(t, fmt.Sprintf(`
SET 'parallelism.default' = '%d';
CREATE TABLE t (seq INT, k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
%s;`, 1+seed%2, filepath.Join(dir, "t.jsonl"), q.sluice))
			for _, n := range want {
				compared += n
			}
			if d := diff(want, got); d != "" {
				t.Errorf("seed %d: %s\n(- PostgreSQL, + Sluice)\n%s", seed, q.sluice, d)
			}
		}
	}
	t.Logf("%d OVER aggregations over 6 tables: %d result rows compared", len(overQueries), compared)
}
