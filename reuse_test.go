package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// runLogged runs src (with $DIR replaced by dir) and returns what it
// printed, sorted, and the rows its jobs read, from their summaries.
func runLogged(t *testing.T, dir, src string) (out []string, read int) {
	t.Helper()
	var stdout, log bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &stdout, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src = strings.ReplaceAll(src, "$DIR", dir)
	if err := e.Run(context.Background(), "test.sql", []byte(src)); err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	for _, m := range regexp.MustCompile(`(\d+) rows read`).FindAllStringSubmatch(log.String(), -1) {
		var n int
		fmt.Sscan(m[1], &n)
		read += n
	}
	out = strings.Split(strings.TrimSpace(stdout.String()), "\n")
	slices.Sort(out)
	return out, read
}

const reuseOff = "SET 'table.optimizer.reuse-source-enabled' = 'false';\n"

const reuseEvents = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"b","v":20,"ts":"2024-01-01 00:00:02"}
{"k":"a","v":30,"ts":"2024-01-01 00:00:03"}
{"k":"c","v":4,"ts":"2024-01-01 00:00:04"}
{"k":"b","v":50,"ts":"2024-01-01 00:00:05"}
{"k":"a","v":60,"ts":"2024-01-01 00:00:06"}
{"k":"c","v":70,"ts":"2024-01-01 00:00:07"}
`

const reuseDDL = `
CREATE TABLE events (k STRING, v INT, ts TIMESTAMP(3), v2 AS v * 2, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
`

// A statement set of two INSERTs over one table reads it once (as
// Flink's 'table.optimizer.reuse-source-enabled', on by default) and
// writes what it wrote reading it twice.
func TestSourceReuseStatementSet(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", reuseEvents)
	job := reuseDDL + `
CREATE TABLE small (k STRING, v2 INT) WITH ('connector' = 'print', 'print-identifier' = 'small');
CREATE TABLE counts (k STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'counts');
EXECUTE STATEMENT SET BEGIN
INSERT INTO small SELECT k, v2 FROM events WHERE v < 10;
INSERT INTO counts SELECT k, COUNT(*) FROM events GROUP BY k;
END;`
	shared, readShared := runLogged(t, dir, job)
	apart, readApart := runLogged(t, dir, reuseOff+job)
	if readShared != 7 || readApart != 14 {
		t.Errorf("rows read: %d shared (want 7), %d apart (want 14)", readShared, readApart)
	}
	if !slices.Equal(shared, apart) {
		t.Errorf("shared source wrote\n%s\nsources apart wrote\n%s", strings.Join(shared, "\n"), strings.Join(apart, "\n"))
	}
	for _, want := range []string{"small> +I[a, 2]", "small> +I[c, 8]", "counts> +I[a, 3]"} {
		if !slices.Contains(shared, want) {
			t.Errorf("no %q in\n%s", want, strings.Join(shared, "\n"))
		}
	}
}

// The INSERTs of a statement set that read one table share its bound
// scan (the planner binds a table once per statement): one renaming the
// table's columns, one reading it by its own names, one joining it with
// itself and one pruning other columns each write what they write as
// statements of their own.
func TestStatementSetScansOfOneTable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", reuseEvents)
	ddl := reuseDDL + `
CREATE TABLE renamed (a STRING, d INT) WITH ('connector' = 'print', 'print-identifier' = 'renamed');
CREATE TABLE named (k STRING, v2 INT) WITH ('connector' = 'print', 'print-identifier' = 'named');
CREATE TABLE joined (k STRING, v INT, w INT) WITH ('connector' = 'print', 'print-identifier' = 'joined');
CREATE TABLE pruned (ts TIMESTAMP(3)) WITH ('connector' = 'print', 'print-identifier' = 'pruned');
`
	inserts := []string{
		"INSERT INTO renamed SELECT a, d FROM events AS e(a, b, c, d) WHERE b > 25",
		"INSERT INTO named SELECT k, v2 FROM events WHERE v < 25",
		"INSERT INTO joined SELECT x.k, x.v, y.v FROM events AS x JOIN events AS y ON x.k = y.k AND x.v < y.v",
		"INSERT INTO pruned SELECT ts FROM events WHERE k = 'c'",
	}
	set, _ := runLogged(t, dir, ddl+"EXECUTE STATEMENT SET BEGIN\n"+strings.Join(inserts, ";\n")+";\nEND;")
	apart, _ := runLogged(t, dir, ddl+strings.Join(inserts, ";\n")+";")
	if len(set) != 14 || !slices.Equal(set, apart) {
		t.Errorf("the statement set wrote\n%s\nthe INSERTs apart wrote\n%s", strings.Join(set, "\n"), strings.Join(apart, "\n"))
	}
	for _, want := range []string{"renamed> +I[b, 100]", "named> +I[b, 40]", "joined> +I[a, 1, 60]", "pruned> +I[2024-01-01 00:00:07.000]"} {
		if !slices.Contains(set, want) {
			t.Errorf("no %q in\n%s", want, strings.Join(set, "\n"))
		}
	}
}

// A self-join of two views over one table (Nexmark q3's shape), a union
// of the table with itself under an aggregation, and an event-time window
// join give the same rows with the source shared and apart: the rows of
// the two sides meet without one being taken for a replay of the other.
func TestSourceReuseSelfJoin(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", reuseEvents)
	for name, q := range map[string]string{
		"join": `
CREATE VIEW cheap AS SELECT k, v FROM events WHERE v < 25;
CREATE VIEW dear AS SELECT k, v2 FROM events WHERE v >= 25;
SELECT c.k, c.v, d.v2 FROM cheap AS c JOIN dear AS d ON c.k = d.k;`,
		"union": `
SELECT k, COUNT(*) AS n, SUM(v) AS s FROM (SELECT k, v FROM events UNION ALL SELECT k, v2 FROM events) GROUP BY k;`,
		"window join": `
SELECT l.k, l.window_start, l.n, r.m FROM
  (SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '4' SECOND))
   GROUP BY k, window_start, window_end) AS l
JOIN
  (SELECT k, window_start, window_end, MAX(v2) AS m FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '4' SECOND))
   GROUP BY k, window_start, window_end) AS r
ON l.k = r.k AND l.window_start = r.window_start AND l.window_end = r.window_end;`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, par := range []string{"1", "2"} {
				set := "SET 'parallelism.default' = '" + par + "';\n"
				shared, readShared := runLogged(t, dir, set+reuseDDL+q)
				apart, readApart := runLogged(t, dir, set+reuseOff+reuseDDL+q)
				// The order in which the sides' rows meet varies from run
				// to run, and so do an aggregate's intermediate updates:
				// compare what the changelogs amount to.
				shared, apart = netRows(shared), netRows(apart)
				if readShared != 7 || readApart != 14 {
					t.Errorf("parallelism %s: rows read: %d shared (want 7), %d apart (want 14)", par, readShared, readApart)
				}
				if len(shared) < 3 || !slices.Equal(shared, apart) {
					t.Errorf("parallelism %s: shared source gave\n%s\nsources apart gave\n%s", par,
						strings.Join(shared, "\n"), strings.Join(apart, "\n"))
				}
			}
		})
	}
}

// A self-join over a shared Kafka source, stopped with checkpoints in a
// durable state and resumed over more input, writes exactly what one run
// over all the input writes: one position per partition for both sides.
func TestSourceReuseStopResume(t *testing.T) {
	bs := kafkatest.Start(t, 2, "bids")
	dir := t.TempDir()
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Partition: int32(i % 2),
				Value: fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d}`, i%13, i, (i*37)%100)})
		}
		kafkatest.Produce(t, bs, "bids", recs...)
	}
	job := func(state string) string {
		return strings.ReplaceAll(`
SET 'state.dir' = '`+state+`';
SET 'execution.checkpointing.interval' = '30ms';
SET 'parallelism.default' = '2';
CREATE TABLE bids (auction INT, bidder INT, price INT) WITH (
  'connector' = 'kafka', 'topic' = 'bids', 'properties.bootstrap.servers' = '$BS',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (auction INT, bidder INT, price INT) WITH ('connector' = 'print');
CREATE VIEW low AS SELECT auction, bidder FROM bids WHERE price < 30;
CREATE VIEW high AS SELECT auction, price FROM bids WHERE price >= 70;
INSERT INTO out SELECT l.auction, l.bidder, h.price FROM low AS l JOIN high AS h ON l.auction = h.auction;`, "$BS", bs)
	}
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if strings.HasPrefix(l, "+I[") {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		return out
	}
	const half, total = 200, 400
	produce(0, half)
	// The join's rows of the first half, then of all of it.
	joined := func(n int) int {
		c := 0
		for i := range n {
			for j := range n {
				if i%13 == j%13 && (i*37)%100 < 30 && (j*37)%100 >= 70 {
					c++
				}
			}
		}
		return c
	}
	stateDir := dir + "/resumed"
	first := runUntilRows(t, job(stateDir), joined(half))
	produce(half, total)
	second := runUntilRows(t, job(stateDir), joined(total)-joined(half))
	once := runUntilRows(t, job(dir+"/once"), joined(total))
	got := lines(first + second)
	want := lines(once)
	if len(want) != joined(total) {
		t.Fatalf("one run wrote %d rows, want %d", len(want), joined(total))
	}
	if !slices.Equal(got, want) {
		t.Errorf("stopped and resumed: %d rows; one run: %d rows", len(got), len(want))
	}
}

// runUntilRows runs the job of src until it printed n rows (and a few
// checkpoints more), stops it and returns its output.
func runUntilRows(t *testing.T, src string, n int) string {
	t.Helper()
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(out.String(), "+I[") < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d rows of %d in the output:\n%s", strings.Count(out.String(), "+I["), n, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // checkpoints go on; no more rows come
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "+I["); got != n {
		t.Fatalf("%d rows in the output, want %d:\n%s", got, n, out.String())
	}
	return out.String()
}

// netRows applies the printed changelog rows in lines (+I and +U add
// a row, -U and -D take one away) and returns the rows that remain,
// sorted.
func netRows(lines []string) []string {
	count := map[string]int{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+I"), strings.HasPrefix(l, "+U"):
			count[l[2:]]++
		case strings.HasPrefix(l, "-U"), strings.HasPrefix(l, "-D"):
			count[l[2:]]--
		}
	}
	var out []string
	for r, n := range count {
		for range n {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
