package sluice_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cdcRow is a row of the captured database table.
type cdcRow struct {
	ID int    `json:"id"`
	K  string `json:"k"`
	V  int64  `json:"v"`
}

// writeChanges writes n debezium-json change events of a table with a
// primary key id (inserts, updates that may move a row to another k,
// deletes, some as snapshot reads) and returns the table's final rows.
func writeChanges(t *testing.T, path string, n int, seed uint64) map[int]cdcRow {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	table := map[int]cdcRow{}
	var ids []int
	var b strings.Builder
	event := func(before, after *cdcRow, op string) {
		rec := map[string]any{"before": before, "after": after, "op": op, "ts_ms": 1}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	next := 0
	for range n {
		switch x := rng.IntN(10); {
		case x < 4 || len(ids) == 0:
			r := cdcRow{ID: next, K: fmt.Sprintf("k%02d", rng.IntN(15)), V: rng.Int64N(1000) - 300}
			next++
			table[r.ID] = r
			ids = append(ids, r.ID)
			op := "c"
			if x == 0 {
				op = "r"
			}
			event(nil, &r, op)
		case x < 8:
			id := ids[rng.IntN(len(ids))]
			old := table[id]
			r := old
			r.V = rng.Int64N(1000) - 300
			if rng.IntN(3) == 0 {
				r.K = fmt.Sprintf("k%02d", rng.IntN(15))
			}
			table[id] = r
			event(&old, &r, "u")
		default:
			i := rng.IntN(len(ids))
			id := ids[i]
			ids = slices.Delete(ids, i, i+1)
			old := table[id]
			delete(table, id)
			event(&old, nil, "d")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return table
}

// totals is the GROUP BY k result over the table's rows: "k,sum,count".
func totals(table map[int]cdcRow) []string {
	sum, cnt := map[string]int64{}, map[string]int64{}
	for _, r := range table {
		sum[r.K] += r.V
		cnt[r.K]++
	}
	var out []string
	for k := range sum {
		out = append(out, fmt.Sprintf("%s,%d,%d", k, sum[k], cnt[k]))
	}
	slices.Sort(out)
	return out
}

// applyChangelog applies a debezium-json file of the sink (k, total, n)
// and returns the final rows as "k,total,n". Without a key, a delete must
// remove a row that is there; with one (upsert), an insert replaces the
// key's row and a delete removes it.
func applyChangelog(t *testing.T, path string, upsert bool) (rows []string, updates, deletes int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		K     string `json:"k"`
		Total int64  `json:"total"`
		N     int64  `json:"n"`
	}
	bag := map[string]int{}      // row -> multiplicity
	byKey := map[string]string{} // k -> row (upsert)
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Before *out   `json:"before"`
			After  *out   `json:"after"`
			Op     string `json:"op"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		switch {
		case rec.Op == "c" && rec.After != nil && rec.Before == nil:
			row := fmt.Sprintf("%s,%d,%d", rec.After.K, rec.After.Total, rec.After.N)
			if upsert {
				if _, ok := byKey[rec.After.K]; ok {
					updates++
				}
				byKey[rec.After.K] = row
			} else {
				bag[row]++
			}
		case rec.Op == "d" && rec.Before != nil && rec.After == nil:
			row := fmt.Sprintf("%s,%d,%d", rec.Before.K, rec.Before.Total, rec.Before.N)
			deletes++
			if upsert {
				if byKey[rec.Before.K] != row {
					t.Fatalf("%s:%d: deletes %s, but the key's row is %q", path, i+1, row, byKey[rec.Before.K])
				}
				delete(byKey, rec.Before.K)
			} else {
				if bag[row] == 0 {
					t.Fatalf("%s:%d: retracts %s, which is not there", path, i+1, row)
				}
				bag[row]--
			}
		default:
			t.Fatalf("%s:%d: not a debezium insert or delete: %s", path, i+1, line)
		}
	}
	for row, n := range bag {
		for range n {
			rows = append(rows, row)
		}
	}
	for _, row := range byKey {
		rows = append(rows, row)
	}
	slices.Sort(rows)
	return rows, updates, deletes
}

// TestE2EChangelogGroupBy reads a debezium-json changelog, aggregates it
// by key (the aggregate retracts what updates and deletes take away) and
// writes the updating result as debezium-json, to a table without and one
// with a PRIMARY KEY. Applying the output (as a changelog, or by key)
// gives the aggregate of the captured table's final rows.
func TestE2EChangelogGroupBy(t *testing.T) {
	for _, par := range []string{"1", "2"} {
		t.Run("parallelism="+par, func(t *testing.T) {
			dir := t.TempDir()
			// More than one source batch (1024 rows), so that the
			// aggregate emits updates, not only final rows.
			table := writeChanges(t, filepath.Join(dir, "changes.jsonl"), 6000, 7)
			want := totals(table)
			src := `
SET 'parallelism.default' = '` + par + `';
CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/changes.jsonl', 'format' = 'debezium-json');
CREATE TABLE totals (k STRING, total BIGINT, n BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/totals.jsonl', 'format' = 'debezium-json');
CREATE TABLE latest (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '$DIR/latest.jsonl', 'format' = 'debezium-json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM cdc GROUP BY k;
INSERT INTO latest SELECT k, SUM(v), COUNT(*) FROM cdc GROUP BY k;
END;
`
			if out, err := runSQL(t, nil, dir, src); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got, _, deletes := applyChangelog(t, filepath.Join(dir, "totals.jsonl"), false)
			if !slices.Equal(got, want) {
				t.Errorf("totals: applied changelog\n got %v\nwant %v", got, want)
			}
			if deletes == 0 {
				t.Errorf("totals: the changelog has no retractions; the test does not exercise updates")
			}
			// With a PRIMARY KEY the -U rows are written too (as Flink
			// writes them): applied by key, each deletes the key's row
			// before the +U puts the new one.
			got, _, deletes = applyChangelog(t, filepath.Join(dir, "latest.jsonl"), true)
			if !slices.Equal(got, want) {
				t.Errorf("latest: applied by key\n got %v\nwant %v", got, want)
			}
			if deletes == 0 {
				t.Errorf("latest: no -U or -D was written")
			}
		})
	}
}

// TestChangelogSourcePlanning: a changelog table's scan is updating, so an
// append-only sink is refused and print shows every kind.
func TestChangelogSourcePlanning(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "changes.jsonl", `{"data":[{"id":1,"k":"a","v":5}],"type":"INSERT"}
{"data":[{"id":1,"k":"a","v":7}],"old":[{"v":5}],"type":"UPDATE"}
{"data":[{"id":1,"k":"a","v":7}],"type":"DELETE"}
`)
	ddl := `
CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/changes.jsonl', 'format' = 'canal-json');
CREATE TABLE plain (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/plain.jsonl', 'format' = 'json');
`
	_, err := runSQL(t, nil, dir, ddl+"INSERT INTO plain SELECT * FROM cdc;")
	if err == nil || !strings.Contains(err.Error(), "doesn't support consuming update changes") {
		t.Fatalf("an updating scan into a json sink: %v", err)
	}
	out, err := runSQL(t, nil, dir, ddl+"SELECT id, k, v * 2 AS v2 FROM cdc;")
	if err != nil {
		t.Fatal(err)
	}
	if want := "id, k, v2\n+I[1, a, 10]\n-U[1, a, 10]\n+U[1, a, 14]\n-D[1, a, 14]\n"; out != want {
		t.Fatalf("printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestChangelogResumeFromStateDir: a job over a changelog file resumes
// after the last row its checkpoint covered, though the rows of a record
// share the record's line.
func TestChangelogResumeFromStateDir(t *testing.T) {
	dir := t.TempDir()
	src := `SET 'state.dir' = '` + filepath.Join(dir, "state") + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/changes.jsonl', 'format' = 'debezium-json');
SELECT k, SUM(v) AS total FROM cdc GROUP BY k;`
	first := `{"after":{"id":1,"k":"a","v":1},"op":"c"}
{"after":{"id":2,"k":"a","v":2},"op":"c"}
{"before":{"id":1,"k":"a","v":1},"after":{"id":1,"k":"b","v":5},"op":"u"}
`
	writeFile(t, dir, "changes.jsonl", first)
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if lines := sortedLines(out); !slices.Contains(lines, "+I[b, 5]") || !slices.Contains(lines, "+I[a, 2]") {
		t.Fatalf("first run:\n%s", out)
	}
	// Two records are appended: a run that re-read the first three would
	// count them again.
	second := first + `{"before":{"id":2,"k":"a","v":2},"op":"d"}
{"before":{"id":1,"k":"b","v":5},"after":{"id":1,"k":"a","v":7},"op":"u"}
`
	writeFile(t, dir, "changes.jsonl", second)
	out, err = runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"k, total", "+U[a, 7]", "-D[b, 5]", "-U[a, 2]"}
	slices.Sort(want[1:])
	if got := sortedLines(out); !slices.Equal(got, want) {
		t.Fatalf("second run:\n got %v\nwant %v", got, want)
	}
}

// TestChangelogOrderBy: ORDER BY over a changelog table sorts the table
// the changelog ends with.
func TestChangelogOrderBy(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "changes.jsonl", `{"type":"insert","data":{"id":1,"k":"a","v":5}}
{"type":"insert","data":{"id":2,"k":"b","v":1}}
{"type":"insert","data":{"id":3,"k":"c","v":9}}
{"type":"update","data":{"id":1,"k":"a","v":0},"old":{"v":5}}
{"type":"delete","data":{"id":3,"k":"c","v":9}}
{"type":"insert","data":{"id":4,"k":"d","v":3}}
`)
	out, err := runSQL(t, nil, dir, `
CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/changes.jsonl', 'format' = 'maxwell-json');
SELECT k, v FROM cdc ORDER BY v DESC;`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "k, v\n+I[d, 3]\n+I[b, 1]\n+I[a, 0]\n"; out != want {
		t.Fatalf("printed:\n%s\nwant:\n%s", out, want)
	}
}
