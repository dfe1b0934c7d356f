package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicesql/sluice"
)

// temporalQueries are event-time temporal joins of orders o(id, k, x, t)
// with the versioned table r(k, v, t, seq), in Sluice and as the lateral
// subquery that says what they mean in PostgreSQL: the latest version of
// the key at or before the order's time (of versions at one time, the
// last received).
var temporalQueries = []struct{ sluice, pg string }{
	{
		"SELECT o.id, o.k, r.v FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.t ON o.k = r.k",
		"SELECT o.id, o.k, r.v FROM o LEFT JOIN LATERAL (SELECT * FROM r WHERE r.k = o.k AND r.t <= o.t ORDER BY r.t DESC, r.seq DESC LIMIT 1) r ON true",
	},
	{
		"SELECT o.id, r.v, o.x FROM o JOIN r FOR SYSTEM_TIME AS OF o.t ON o.k = r.k AND r.v > o.x",
		"SELECT o.id, r.v, o.x FROM o JOIN LATERAL (SELECT * FROM r WHERE r.k = o.k AND r.t <= o.t ORDER BY r.t DESC, r.seq DESC LIMIT 1) r ON r.v > o.x",
	},
	{
		"SELECT o.id, r.v FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.t ON o.k = r.k AND r.v <> 3 WHERE o.x > 1",
		"SELECT o.id, r.v FROM o LEFT JOIN LATERAL (SELECT * FROM r WHERE r.k = o.k AND r.t <= o.t ORDER BY r.t DESC, r.seq DESC LIMIT 1) r ON r.v <> 3 WHERE o.x > 1",
	},
}

// TestTemporalJoinWithPostgres runs the temporal joins over random orders
// and versions (NULL keys, hot keys, several versions at one time) in
// Sluice, from JSON files in time order, and in PostgreSQL, and compares
// the results as multisets. Orders come at odd milliseconds and versions
// at even ones, so that no order ties a version: which of the two the
// watermark lets through first is not what this test is about.
func TestTemporalJoinWithPostgres(t *testing.T) {
	ctx, conn := postgres(t)

	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := func(ms int64) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	key := func(rng *rand.Rand) any {
		switch {
		case rng.IntN(15) == 0:
			return nil
		case rng.IntN(3) == 0:
			return 1
		}
		return rng.IntN(10)
	}
	compared := 0
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		dir := t.TempDir()
		var orders, versions [][]any
		var ot, vt int64
		for i := range 200 + rng.IntN(200) {
			if rng.IntN(2) == 0 {
				ot += int64(rng.IntN(3)) * 2
				orders = append(orders, []any{i, key(rng), rng.IntN(6), ts(ot*2 + 1)})
			} else {
				vt += int64(rng.IntN(3)) // equal times now and then
				versions = append(versions, []any{key(rng), rng.IntN(6), ts(vt * 4), i})
			}
		}
		writeTimed(t, filepath.Join(dir, "o.jsonl"), orders, []string{"id", "k", "x", "t"})
		writeTimed(t, filepath.Join(dir, "r.jsonl"), versions, []string{"k", "v", "t", "seq"})
		loadTable(t, ctx, conn, "o", "id INT, k INT, x INT, t TIMESTAMP", []string{"id", "k", "x", "t"}, orders)
		loadTable(t, ctx, conn, "r", "k INT, v INT, t TIMESTAMP, seq INT", []string{"k", "v", "t", "seq"}, versions)
		for _, q := range temporalQueries {
			want := pgRows(t, ctx, conn, q.pg)
			got := runSluice(t, fmt.Sprintf(`
SET 'parallelism.default' = '%d';
CREATE TABLE o (id INT, k INT, x INT, t TIMESTAMP(3), WATERMARK FOR t AS t)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE r (k INT, v INT, t TIMESTAMP(3), seq INT, WATERMARK FOR t AS t, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
%s;`, 1+seed%2, filepath.Join(dir, "o.jsonl"), filepath.Join(dir, "r.jsonl"), q.sluice))
			for _, n := range want {
				compared += n
			}
			if d := diff(want, got); d != "" {
				t.Errorf("seed %d: %s\n(- PostgreSQL, + Sluice)\n%s", seed, q.sluice, d)
			}
		}
	}
	t.Logf("%d temporal joins over 6 pairs of tables: %d result rows compared", len(temporalQueries), compared)
}

// writeTimed writes rows as JSON lines; time.Time values as Flink's
// TIMESTAMP(3) text.
func writeTimed(t *testing.T, path string, rows [][]any, cols []string) {
	t.Helper()
	conv := make([][]any, len(rows))
	for i, r := range rows {
		conv[i] = make([]any, len(r))
		for j, v := range r {
			if tv, ok := v.(time.Time); ok {
				v = tv.Format("2006-01-02 15:04:05.000")
			}
			conv[i][j] = v
		}
	}
	writeJSON(t, path, conv, cols)
}

func loadTable(t *testing.T, ctx context.Context, conn *pgx.Conn, name, decl string, cols []string, rows [][]any) {
	t.Helper()
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TEMPORARY TABLE %s (%s)", name, name, decl)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{name}, cols, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

// runSluice runs src (ending in a SELECT) and applies the changelog it
// prints to a multiset of rows.
func runSluice(t *testing.T, src string) map[string]int {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Run(ctx, "q.sql", []byte(src)); err != nil {
		t.Fatalf("Sluice: %s", sluice.FormatError(err, []byte(src)))
	}
	return applyChangelog(t, out.String())
}

// applyChangelog applies printed rows (after the header line): +I/+U add
// a row, -U/-D take one away.
func applyChangelog(t *testing.T, printed string) map[string]int {
	t.Helper()
	got := map[string]int{}
	lines := strings.Split(strings.TrimSpace(printed), "\n")
	for _, l := range lines[1:] {
		if len(l) < 3 {
			continue
		}
		body := l[2:]
		switch l[:2] {
		case "+I", "+U":
			got[body]++
		case "-U", "-D":
			got[body]--
		default:
			t.Fatalf("Sluice printed %q", l)
		}
	}
	for k, n := range got {
		if n == 0 {
			delete(got, k)
		}
	}
	return got
}
