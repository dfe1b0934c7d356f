package sluice_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// bidsDDL is the Bid table of Flink's window aggregation documentation.
const bidsDDL = `
CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
`

func writeBids(t *testing.T, dir string) {
	writeFile(t, dir, "bids.jsonl", `{"bidtime":"2020-04-15 08:05:00","price":4.00,"item":"C","supplier_id":"supplier1"}
{"bidtime":"2020-04-15 08:07:00","price":2.00,"item":"A","supplier_id":"supplier1"}
{"bidtime":"2020-04-15 08:09:00","price":5.00,"item":"D","supplier_id":"supplier2"}
{"bidtime":"2020-04-15 08:11:00","price":3.00,"item":"B","supplier_id":"supplier2"}
{"bidtime":"2020-04-15 08:13:00","price":1.00,"item":"E","supplier_id":"supplier1"}
{"bidtime":"2020-04-15 08:17:00","price":6.00,"item":"F","supplier_id":"supplier2"}
`)
}

const productsFrom = `FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)`

// TestGroupingSetsFlinkDocs runs the examples of Flink's Group Aggregation
// and Window Aggregation pages (GROUPING SETS, ROLLUP, CUBE) and checks
// the rows the pages show, with parallel aggregations.
func TestGroupingSetsFlinkDocs(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	docRows := []string{
		"[null, null, 4]", "[supplier1, 3, 1]", "[supplier1, 4, 1]", "[supplier1, null, 2]",
		"[supplier2, 3, 1]", "[supplier2, 4, 1]", "[supplier2, null, 2]",
	}
	windowRows := []string{
		"[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, null, 11.00]",
		"[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, supplier1, 6.00]",
		"[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, supplier2, 5.00]",
		"[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, null, 10.00]",
		"[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, supplier1, 1.00]",
		"[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, supplier2, 9.00]",
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"SELECT supplier_id, rating, COUNT(*) AS total " + productsFrom +
			" GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ())", docRows},
		{"SELECT supplier_id, rating, COUNT(*) " + productsFrom + " GROUP BY ROLLUP (supplier_id, rating)", docRows},
		// GROUPING tells a NULL of the data from a NULL of a set that
		// leaves the column out; GROUPING_ID(a, b) is GROUPING(a) * 2 +
		// GROUPING(b).
		{"SELECT supplier_id, rating, GROUPING(supplier_id), GROUPING(rating), GROUPING_ID(supplier_id, rating), GROUP_ID() " +
			productsFrom + " GROUP BY ROLLUP (supplier_id, rating)", []string{
			"[null, null, 1, 1, 3, 0]", "[supplier1, 3, 0, 0, 0, 0]", "[supplier1, 4, 0, 0, 0, 0]", "[supplier1, null, 0, 1, 1, 0]",
			"[supplier2, 3, 0, 0, 0, 0]", "[supplier2, 4, 0, 0, 0, 0]", "[supplier2, null, 0, 1, 1, 0]",
		}},
		{`SELECT window_start, window_end, supplier_id, SUM(price) AS price
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ())`, windowRows},
		{`SELECT window_start, window_end, supplier_id, SUM(price) AS price
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, ROLLUP (supplier_id)`, windowRows},
		// HAVING sees GROUPING; a repeated set gives its rows twice,
		// GROUP_ID() numbering the copies.
		{`SELECT window_start, supplier_id, COUNT(*), GROUP_ID()
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), (), ())
HAVING GROUPING(supplier_id) = 1`, []string{
			"[2020-04-15 08:00:00.000, null, 3, 0]", "[2020-04-15 08:00:00.000, null, 3, 1]",
			"[2020-04-15 08:10:00.000, null, 3, 0]", "[2020-04-15 08:10:00.000, null, 3, 1]",
		}},
		// MAX(item) sees the items of sets that put NULL in the key item.
		{`SELECT item, supplier_id, MAX(item), COUNT(*)
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, GROUPING SETS ((item), (supplier_id))
HAVING COUNT(*) > 1`, []string{"[null, supplier1, C, 2]", "[null, supplier2, F, 2]"}},
	} {
		out, err := runSQL(t, nil, dir, "SET 'parallelism.default' = '2';"+bidsDDL+c.query+";")
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got := finalRows(t, out); !slices.Equal(got, c.want) {
			t.Errorf("%s\ngot  %q\nwant %q", c.query, got, c.want)
		}
	}
}

// TestGroupingSetsEquivalences: CUBE and ROLLUP are the grouping sets they
// stand for (Flink's documentation), and grouping sets are the UNION ALL
// of one GROUP BY per set with NULL for the columns a set leaves out.
func TestGroupingSetsEquivalences(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	for _, pair := range [][2]string{
		{"SELECT item, supplier_id, SUM(price) FROM Bid GROUP BY CUBE (supplier_id, item)",
			"SELECT item, supplier_id, SUM(price) FROM Bid GROUP BY GROUPING SETS ((supplier_id, item), (supplier_id), (item), ())"},
		{"SELECT supplier_id, item, COUNT(*) FROM Bid GROUP BY ROLLUP (supplier_id, item)",
			`SELECT supplier_id, item, COUNT(*) FROM Bid GROUP BY supplier_id, item
UNION ALL SELECT supplier_id, CAST(NULL AS STRING), COUNT(*) FROM Bid GROUP BY supplier_id
UNION ALL SELECT CAST(NULL AS STRING), CAST(NULL AS STRING), COUNT(*) FROM Bid`},
		{`SELECT window_start, item, supplier_id, MIN(price) FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, CUBE (item, supplier_id)`,
			`SELECT window_start, item, supplier_id, MIN(price) FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY GROUPING SETS ((window_start, window_end, item, supplier_id), (window_start, window_end, item), (window_start, window_end, supplier_id), (window_start, window_end))`},
	} {
		a, err := runSQL(t, nil, dir, bidsDDL+pair[0]+";")
		if err != nil {
			t.Fatalf("%s: %v", pair[0], err)
		}
		b, err := runSQL(t, nil, dir, bidsDDL+pair[1]+";")
		if err != nil {
			t.Fatalf("%s: %v", pair[1], err)
		}
		if ra, rb := finalRows(t, a), finalRows(t, b); !slices.Equal(ra, rb) || len(ra) < 6 {
			t.Errorf("%s\n%q\ndiffers from\n%s\n%q", pair[0], ra, pair[1], rb)
		}
	}
}

// TestGroupingSetsErrors: what is refused, at its position.
func TestGroupingSetsErrors(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	var many []string
	for i := range 64 {
		many = append(many, fmt.Sprintf("price + %d", i))
	}
	tooMany := "SELECT COUNT(*) FROM Bid GROUP BY GROUPING SETS ((" + strings.Join(many, ", ") + "))"
	tooManySets := "SELECT COUNT(*) FROM Bid GROUP BY CUBE (item, price, supplier_id, bidtime, 1, 2), CUBE (item || 'a', 3, 4, 5, 6, 7), ROLLUP (item)"
	for _, c := range []struct{ query, want string }{
		// Flink's message, at the 64th expression.
		{tooMany, fmt.Sprintf("test.sql:5:%d: group count must be less than 64", strings.Index(tooMany, "price + 63")+1)},
		// 64 * 64 sets, then twice as many.
		{tooManySets, fmt.Sprintf("test.sql:5:%d: GROUP BY gives more than 4096 grouping sets", strings.Index(tooManySets, "ROLLUP")+1)},
		{"SELECT item, GROUP_ID(item) FROM Bid GROUP BY ROLLUP (item)", "test.sql:5:14: GROUP_ID takes no arguments"},
		{"SELECT item, GROUPING() FROM Bid GROUP BY ROLLUP (item)", "test.sql:5:14: GROUPING takes one or more grouped expressions"},
		{"SELECT item, SUM(GROUPING(item)) FROM Bid GROUP BY ROLLUP (item)",
			"test.sql:5:18: GROUPING operator may only occur in SELECT, HAVING or ORDER BY clause"},
		{"SELECT GROUPING_ID(item) FROM Bid", "test.sql:5:20: Argument to GROUPING_ID operator must be a grouped expression"},
		{`SELECT item, COUNT(*) FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
GROUP BY window_start, window_end, ROLLUP (item)`,
			"test.sql:6:36: a SESSION window with PARTITION BY item is aggregated with grouping sets only if every set groups by item"},
		{`SELECT window_time, item, COUNT(*) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, GROUPING SETS ((window_time, item), (window_time), ())`,
			"test.sql:6:36: a window aggregation with grouping sets must group every set by window_start and window_end (and window_time, if grouped)"},
	} {
		_, err := runSQL(t, nil, dir, bidsDDL+c.query+";")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\ngot  %v\nwant %q", c.query, err, c.want)
		}
	}
}

// TestGroupingSetsResumeFromStateDir: the aggregation of grouping sets keeps
// its groups per keys and expand id in the state; run again over a grown
// input, every set's groups go on from the restored counts.
func TestGroupingSetsResumeFromStateDir(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "{\"k\":\"k%d\",\"c\":\"c%d\"}\n", i%3, i%2)
		}
		return b.String()
	}
	src := `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
CREATE TABLE events (k STRING, c STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
SELECT k, c, GROUPING_ID(k, c) AS g, COUNT(*) AS n FROM events GROUP BY CUBE (k, c);`
	writeFile(t, dir, "events.jsonl", lines(0, 30))
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	first := finalRows(t, out)
	if !slices.Contains(first, "[null, null, 3, 30]") || !slices.Contains(first, "[k0, c0, 0, 5]") || len(first) != 12 {
		t.Fatalf("first run: %q", first)
	}
	// Six lines are appended: only they are read, and every group goes on
	// from its restored count (-U of the old count, +U of the new).
	writeFile(t, dir, "events.jsonl", lines(0, 36))
	out, err = runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "+I[") || !strings.Contains(out, "-U[null, null, 3, 30]") || !strings.Contains(out, "+U[null, null, 3, 36]") {
		t.Fatalf("second run should update the restored groups with the 6 new rows:\n%s", out)
	}
	for _, want := range []string{"+U[k0, null, 1, 12]", "+U[null, c1, 2, 18]", "+U[k2, c1, 0, 6]"} {
		if !strings.Contains(out, want) {
			t.Fatalf("second run: no %s:\n%s", want, out)
		}
	}
}

// TestGroupingSetsWindowAcrossStop: a window aggregation of grouping sets
// over an unbounded source with a durable state, stopped while a window is
// open, keeps that window's groups of every set and emits them whole in
// the next run.
func TestGroupingSetsWindowAcrossStop(t *testing.T) {
	bs := kafkatest.Start(t, 1, "ticks")
	dir := t.TempDir()
	produce := func(from, to int) { // one row a second, k alternating
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			ts := clusterBase.Add(time.Duration(i) * time.Second)
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"ts":"%s","k":"k%d"}`, ts.Format("2006-01-02 15:04:05"), i%2)})
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
CREATE TABLE out (ws TIMESTAMP(3), k STRING, g BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT window_start, k, GROUPING(k), COUNT(*)
FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, ROLLUP (k);`, "$BS", bs)
	produce(0, 150) // 00:00 and 00:01 complete, 00:02 open with 30 rows
	first := runUntilStop(t, src, "+I[2026-01-01 00:01:00.000, null, 1, 60]")
	if strings.Contains(first, "00:02:00") {
		t.Fatalf("the stop emitted the open window:\n%s", first)
	}
	produce(150, 200) // 20 more rows of 00:02, and 00:03 opens
	second := runUntilStop(t, src, "+I[2026-01-01 00:02:00.000, null, 1, 60]")
	for _, want := range []string{"+I[2026-01-01 00:02:00.000, k0, 0, 30]", "+I[2026-01-01 00:02:00.000, k1, 0, 30]"} {
		if !strings.Contains(second, want) {
			t.Fatalf("the open window's groups were not kept whole across the stop: no %s\nfirst run:\n%ssecond run:\n%s", want, first, second)
		}
	}
}

// TestGroupingSetsOrderBy: ORDER BY may sort by GROUPING() that the select
// list leaves out (Flink's testGroupingInOrderByClause).
func TestGroupingSetsOrderBy(t *testing.T) {
	dir := t.TempDir()
	writeBids(t, dir)
	out, err := runSQL(t, nil, dir, bidsDDL+`
SELECT supplier_id, COUNT(*) AS c FROM Bid GROUP BY ROLLUP (supplier_id) ORDER BY GROUPING(supplier_id) DESC, supplier_id;`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "supplier_id, c\n+I[null, 6]\n+I[supplier1, 3]\n+I[supplier2, 3]"; strings.TrimSpace(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// TestGroupingSetsStateBelongsToTheSets: the expand id means a set only
// with the sets of its query, so the state of an aggregation of grouping
// sets is refused to one of other sets over the same columns (ROLLUP and
// CUBE of a, b group by the same keys and $e, but CUBE's $e = 2, (b), has
// no groups in ROLLUP's state).
func TestGroupingSetsStateBelongsToTheSets(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "a.jsonl", "{\"k\":\"x\",\"c\":\"p\"}\n{\"k\":\"y\",\"c\":\"q\"}\n")
	job := func(sets string) string {
		return `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (k STRING, c STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING, c STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, c, COUNT(*) FROM events GROUP BY ` + sets + `;`
	}
	if _, err := runSQL(t, nil, dir, job("ROLLUP (k, c)")); err != nil {
		t.Fatal(err)
	}
	_, err := runSQL(t, nil, dir, job("CUBE (k, c)"))
	if err == nil || !strings.Contains(err.Error(), "Expand(") {
		t.Fatalf("got %v, want a refusal naming the changed grouping sets", err)
	}
}
