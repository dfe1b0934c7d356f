package sluice_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// appendOnlyRows returns the printed rows without their kind, sorted,
// failing the test on any row that is not an insert.
func appendOnlyRows(t *testing.T, printed string) []string {
	t.Helper()
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(printed), "\n")[1:] {
		if !strings.HasPrefix(l, "+I") {
			t.Fatalf("the result is not append-only: %q in\n%s", l, printed)
		}
		rows = append(rows, l[2:])
	}
	slices.Sort(rows)
	return rows
}

// supplierHops is the inner aggregation of the cascades below: bids per
// supplier in 10-minute windows sliding by 5 minutes.
const supplierHops = `
CREATE VIEW per_supplier AS
SELECT supplier_id, COUNT(*) AS cnt, SUM(price) AS total, window_start AS ws, window_end AS we, window_time AS wt
FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY supplier_id, window_start, window_end, window_time;
`

// TestCascadedWindowAggregate: a GROUP BY of the window_start and
// window_end of rows that carry their window (a window aggregation's) is a
// window aggregation, as in Flink (its window-attached windowing): each
// window's row is emitted once, when the watermark passes its end, so the
// result is append-only, fits an append-only sink, and its window_time is
// a time attribute that more windowing can use.
//
// Bid (Flink's window aggregation page) in HOP windows of 10 minutes by 5:
// 08:00-08:10 supplier1 2 bids, supplier2 1; 08:05-08:15 supplier1 3,
// supplier2 2; 08:10-08:20 supplier1 1, supplier2 2; 08:15-08:25
// supplier2 1.
func TestCascadedWindowAggregate(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"max per window", `SELECT ws, we, MAX(cnt), COUNT(*), SUM(total) FROM per_supplier GROUP BY ws, we`, []string{
			"[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 2, 2, 11.00]",
			"[2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 3, 2, 15.00]",
			"[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 2, 2, 10.00]",
			"[2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000, 1, 1, 6.00]",
		}},
		// Grouped by another key too, and by the inner window_time, which
		// is the outer window's: the outer window_time is a time attribute.
		{"keyed, with window_time", `SELECT cnt, ws, wt, COUNT(*) FROM per_supplier GROUP BY cnt, ws, we, wt`, []string{
			"[1, 2020-04-15 08:00:00.000, 2020-04-15 08:09:59.999, 1]",
			"[1, 2020-04-15 08:10:00.000, 2020-04-15 08:19:59.999, 1]",
			"[1, 2020-04-15 08:15:00.000, 2020-04-15 08:24:59.999, 1]",
			"[2, 2020-04-15 08:00:00.000, 2020-04-15 08:09:59.999, 1]",
			"[2, 2020-04-15 08:05:00.000, 2020-04-15 08:14:59.999, 1]",
			"[2, 2020-04-15 08:10:00.000, 2020-04-15 08:19:59.999, 1]",
			"[3, 2020-04-15 08:05:00.000, 2020-04-15 08:14:59.999, 1]",
		}},
		// DISTINCT of the bounds is a GROUP BY of them.
		{"distinct", `SELECT DISTINCT ws, we FROM per_supplier`, []string{
			"[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000]",
			"[2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000]",
			"[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000]",
			"[2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000]",
		}},
		// Three levels: the windows of the second level's rows, and a
		// window TVF over its window_time.
		{"three levels", `CREATE VIEW level2 AS
SELECT ws, we, wt, COUNT(*) AS n FROM per_supplier GROUP BY ws, we, wt;
SELECT window_start, SUM(n) FROM TABLE(TUMBLE(TABLE level2, DESCRIPTOR(wt), INTERVAL '20' MINUTES))
GROUP BY window_start, window_end`, []string{
			"[2020-04-15 08:00:00.000, 6]",
			"[2020-04-15 08:20:00.000, 1]",
		}},
		// A window join of two window aggregations on their bounds (Nexmark
		// q5's shape): the suppliers with the most bids of each window.
		{"window join", `SELECT a.ws, a.supplier_id, a.cnt FROM per_supplier a
JOIN (SELECT ws, we, MAX(cnt) AS maxn FROM per_supplier GROUP BY ws, we) b
ON a.ws = b.ws AND a.we = b.we AND a.cnt >= b.maxn`, []string{
			"[2020-04-15 08:00:00.000, supplier1, 2]",
			"[2020-04-15 08:05:00.000, supplier1, 3]",
			"[2020-04-15 08:10:00.000, supplier2, 2]",
			"[2020-04-15 08:15:00.000, supplier2, 1]",
		}},
		// A window Top-N of a window join's rows (their window is the
		// sides'), as in Flink: the best pair of bids of a supplier in each
		// 10-minute window.
		{"top-n over a window join", `SELECT window_start, item, item2 FROM (
  SELECT a.window_start, a.item, b.item AS item2,
    ROW_NUMBER() OVER (PARTITION BY a.window_start, a.window_end ORDER BY a.price DESC, b.price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) a
  JOIN TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) b
    ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.supplier_id = b.supplier_id
) WHERE rn = 1`, []string{
			"[2020-04-15 08:00:00.000, D, D]",
			"[2020-04-15 08:10:00.000, F, F]",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runSQL(t, nil, dir, "SET 'parallelism.default' = '2';"+bidsDDL+supplierHops+c.query+";")
			if err != nil {
				t.Fatal(err)
			}
			if got := appendOnlyRows(t, out); !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestCascadedWindowAggregateIntoAppendOnlySink: an append-only sink takes
// a two-level window aggregation.
func TestCascadedWindowAggregateIntoAppendOnlySink(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	_, err := runSQL(t, nil, dir, bidsDDL+supplierHops+`
CREATE TABLE top (ws TIMESTAMP(3), maxn BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/top.jsonl', 'format' = 'json');
INSERT INTO top SELECT ws, MAX(cnt) FROM per_supplier GROUP BY ws, we;`)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "top.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Sort(got)
	want := []string{
		`{"ws":"2020-04-15 08:00:00","maxn":2}`, `{"ws":"2020-04-15 08:05:00","maxn":3}`,
		`{"ws":"2020-04-15 08:10:00","maxn":2}`, `{"ws":"2020-04-15 08:15:00","maxn":1}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestCascadedWindowAggregateNotWindowed: what stays an updating GROUP BY,
// as in Flink: a GROUP BY of only one bound of windowed rows, and a GROUP
// BY of the bounds of a processing-time window aggregation (Flink's
// window-attached windowing takes event-time windows only).
func TestCascadedWindowAggregateNotWindowed(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	out, err := runSQL(t, nil, dir, bidsDDL+supplierHops+`SELECT ws, MAX(cnt) FROM per_supplier GROUP BY ws;`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := finalRows(t, out), []string{
		"[2020-04-15 08:00:00.000, 2]", "[2020-04-15 08:05:00.000, 3]",
		"[2020-04-15 08:10:00.000, 2]", "[2020-04-15 08:15:00.000, 1]",
	}; !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	_, err = runSQL(t, nil, dir, bidsDDL+supplierHops+`
CREATE TABLE top (ws TIMESTAMP(3), maxn BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/top.jsonl', 'format' = 'json');
INSERT INTO top SELECT ws, MAX(cnt) FROM per_supplier GROUP BY ws;`)
	if err == nil || !strings.Contains(err.Error(), "test.sql:12:55: table sink 'top' (connector 'filesystem') doesn't support consuming update changes which is produced by node GroupAggregate") {
		t.Fatalf("got %v, want the append-only sink to refuse the updating GROUP BY", err)
	}
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	plan, err := e.Explain("test.sql", []byte(strings.ReplaceAll(bidsDDL, "$DIR", dir)+`
CREATE VIEW b AS SELECT *, PROCTIME() AS pt FROM Bid;
SELECT ws, we, MAX(cnt) FROM (
  SELECT window_start AS ws, window_end AS we, COUNT(*) AS cnt
  FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(pt), INTERVAL '10' MINUTES)) GROUP BY item, window_start, window_end
) GROUP BY ws, we;`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "GroupAggregate(groupBy=[ws, we]") {
		t.Fatalf("a GROUP BY of a processing-time window aggregation's bounds should be a GroupAggregate:\n%s", plan)
	}
}

// TestCascadedWindowAggregateAcrossStop: a cascaded window aggregation over
// a Kafka topic with a durable state, stopped while windows are open, keeps
// both levels' open windows and emits them whole in the next run, and
// fires no window twice.
func TestCascadedWindowAggregateAcrossStop(t *testing.T) {
	bs := kafkatest.Start(t, 1, "ticks")
	dir := t.TempDir()
	produce := func(from, to int) { // one row a second, k in k0..k2
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			ts := clusterBase.Add(time.Duration(i) * time.Second)
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"ts":"%s","k":"k%d"}`, ts.Format("2006-01-02 15:04:05"), i%3)})
		}
		kafkatest.Produce(t, bs, "ticks", recs...)
	}
	src := strings.ReplaceAll(`
SET 'state.dir' = '`+dir+`';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
CREATE TABLE ticks (ts TIMESTAMP(3), k STRING, WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'ticks', 'properties.bootstrap.servers' = '$BS',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (ws TIMESTAMP(3), keys BIGINT, total BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT window_start, COUNT(*), SUM(n) FROM (
  SELECT k, window_start, window_end, COUNT(*) AS n
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY k, window_start, window_end
) GROUP BY window_start, window_end;`, "$BS", bs)
	produce(0, 150) // 00:00 and 00:01 complete, 00:02 open with 30 rows
	first := runUntilStop(t, src, "+I[2026-01-01 00:01:00.000, 3, 60]")
	produce(150, 200) // 20 more rows of 00:02, and 00:03 opens
	second := runUntilStop(t, src, "+I[2026-01-01 00:02:00.000, 3, 60]")
	// The rows of an uninterrupted run, each once: three keys of 20 rows
	// in every complete minute.
	got := strings.Split(strings.TrimSpace(first+second), "\n")
	slices.Sort(got)
	if want := []string{
		"+I[2026-01-01 00:00:00.000, 3, 60]", "+I[2026-01-01 00:01:00.000, 3, 60]", "+I[2026-01-01 00:02:00.000, 3, 60]",
	}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q\nfirst run:\n%ssecond run:\n%s", got, want, first, second)
	}
}
