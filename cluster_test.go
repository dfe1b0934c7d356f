package sluice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// clusterJob is a windowed count per user, run in cluster mode: the rows
// cross a shuffle topic from the source partitions to the aggregation's.
const clusterJob = `
SET 'cluster.group-id' = 'counts-job';
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '3';
SET 'cluster.session-timeout' = '6s';
CREATE TABLE clicks (
  u STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset',
  $BOUNDED
  'format' = 'json'
);
CREATE TABLE counts (
  u STRING,
  ws TIMESTAMP(3),
  c BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'counts',
  'properties.bootstrap.servers' = '$BOOTSTRAP',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'counts'
);
INSERT INTO counts
SELECT u, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY u, window_start, window_end;
`

var clusterBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clicks returns n rows for partitions 0..3, from row first on, and adds
// their windows' counts to want ("user window-start" → count).
func clicks(first, n int, want map[string]int) []*kgo.Record {
	var recs []*kgo.Record
	for i := first; i < first+n; i++ {
		u := fmt.Sprintf("u%d", i%37)
		ts := clusterBase.Add(time.Duration(i) * 100 * time.Millisecond)
		recs = append(recs, &kgo.Record{Partition: int32(i % 4),
			Value: fmt.Appendf(nil, `{"u":"%s","ts":"%s"}`, u, ts.Format("2006-01-02 15:04:05.000"))})
		if want != nil {
			want[u+" "+ts.Truncate(time.Minute).Format("2006-01-02 15:04:05")]++
		}
	}
	return recs
}

// counts reads the committed output: "user window-start" → count, and
// the number of rows (duplicates included).
func counts(t *testing.T, bs string) (map[string]int, int) {
	t.Helper()
	got := map[string]int{}
	recs := kafkatest.ReadAll(t, bs, "counts")
	for _, r := range recs {
		var row struct {
			U  string `json:"u"`
			WS string `json:"ws"`
			C  int    `json:"c"`
		}
		if err := json.Unmarshal(r.Value, &row); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		got[row.U+" "+row.WS] += row.C
	}
	return got, len(recs)
}

func diffCounts(got, want map[string]int) string {
	var out []string
	for k, w := range want {
		if got[k] != w {
			out = append(out, fmt.Sprintf("%s: got %d, want %d", k, got[k], w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: got %d, want none", k, g))
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return strings.Join(out, "\n")
}

// startInstance starts one process's worth of the cluster job in its own
// engine.
func startInstance(t *testing.T, bs, bounded string) *sluice.Job {
	t.Helper()
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	src := strings.NewReplacer("$BOOTSTRAP", bs, "$BOUNDED", bounded).Replace(clusterJob)
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	for _, r := range res {
		if r.Job != nil {
			j := r.Job
			t.Cleanup(func() { j.Cancel(); j.Wait() })
			return j
		}
	}
	t.Fatal("no job started")
	return nil
}

// TestClusterBounded runs the job in one member over bounded input: the
// shuffle topic carries the rows to the aggregation, and the output is
// exact.
func TestClusterBounded(t *testing.T) {
	bs := kafkatest.Start(t, 4, "clicks", "counts")
	want := map[string]int{}
	kafkatest.ProduceTo(t, bs, "clicks", clicks(0, 5000, want)...)
	j := startInstance(t, bs, `'scan.bounded.mode' = 'latest-offset',`)
	select {
	case <-j.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not end")
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	got, rows := counts(t, bs)
	t.Logf("%d output rows, %d windows", rows, len(want))
	if d := diffCounts(got, want); d != "" {
		t.Fatalf("output differs:\n%s", d)
	}
	if rows != len(want) {
		t.Fatalf("%d output rows for %d windows: duplicates", rows, len(want))
	}
	// The group's offsets, committed with the checkpoints, show no lag.
	offs, err := kafkatest.Admin(t, bs).FetchOffsets(context.Background(), "counts-job")
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range kafkatest.EndOffsets(t, bs, "clicks") {
		if o, ok := offs.Lookup("clicks", p); !ok || o.At != end {
			t.Errorf("clicks partition %d: group offset %v, want %d", p, o.At, end)
		}
	}
	// The rows went through the shuffle topic, merged into few records.
	shuffled := 0
	tds, err := kafkatest.Admin(t, bs).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tds.Names() {
		if strings.HasPrefix(name, "sluice-counts-job-") && strings.Contains(name, "shuffle") {
			for _, r := range kafkatest.ReadAll(t, bs, name) {
				if len(r.Headers) == 0 {
					shuffled++
				}
			}
		}
	}
	if shuffled == 0 || shuffled > 1000 {
		t.Fatalf("%d data records in the shuffle topic for 5000 rows", shuffled)
	}
	t.Logf("%d data records in the shuffle topic", shuffled)
}

// waitCounts polls the committed output until it equals want.
func waitCounts(t *testing.T, bs string, want map[string]int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, _ := counts(t, bs)
		d := diffCounts(got, want)
		if d == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("output after %v differs:\n%s", timeout, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRows polls the committed output until it has at least n rows.
func waitRows(t *testing.T, bs string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if _, rows := counts(t, bs); rows >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d output rows after %v", n, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitMembers waits until the job's consumer group is stable with n
// members.
func waitMembers(t *testing.T, bs string, n int) {
	t.Helper()
	adm := kafkatest.Admin(t, bs)
	deadline := time.Now().Add(30 * time.Second)
	for {
		gs, err := adm.DescribeGroups(context.Background(), "counts-job")
		if err == nil {
			if g, ok := gs["counts-job"]; ok && g.State == "Stable" && len(g.Members) == n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group did not settle with %d members: %v", n, gs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterScale runs the job in two members, then three, then stops
// one while input keeps coming: the partitions (source and shuffle) move
// between the members with their state, and the output is complete and
// exact, with no window counted twice.
func TestClusterScale(t *testing.T) {
	bs := kafkatest.Start(t, 4, "clicks", "counts")
	want := map[string]int{}
	const phase = 12000 // 20 minutes of input
	a := startInstance(t, bs, "")
	b := startInstance(t, bs, "")
	waitMembers(t, bs, 2)
	kafkatest.ProduceTo(t, bs, "clicks", clicks(0, phase, want)...)
	waitRows(t, bs, 100, 30*time.Second)

	c := startInstance(t, bs, "")
	waitMembers(t, bs, 3)
	kafkatest.ProduceTo(t, bs, "clicks", clicks(phase, phase, want)...)
	waitRows(t, bs, 800, 30*time.Second)

	b.Stop()
	if err := b.Wait(); err != nil {
		t.Fatalf("stopped member: %v", err)
	}
	waitMembers(t, bs, 2)
	kafkatest.ProduceTo(t, bs, "clicks", clicks(2*phase, phase, want)...)
	// One row a day later on every partition closes every window.
	late := clicks(3*phase, 4, nil)
	for _, r := range late {
		r.Value = []byte(strings.Replace(string(r.Value), "2026-01-01", "2026-01-02", 1))
	}
	kafkatest.ProduceTo(t, bs, "clicks", late...)
	for _, j := range []*sluice.Job{a, b, c} {
		defer func() { t.Logf("member: %d rows read, %d late", j.Metrics.RowsIn.Load(), j.Metrics.LateRows.Load()) }()
	}
	waitCounts(t, bs, want, 20*time.Second)
	time.Sleep(500 * time.Millisecond) // a duplicate would show now
	if _, rows := counts(t, bs); rows != len(want) {
		t.Fatalf("%d output rows for %d windows: duplicates", rows, len(want))
	}
	for name, j := range map[string]*sluice.Job{"first": a, "second": b, "third": c} {
		if n := j.Metrics.RowsIn.Load(); n == 0 {
			t.Errorf("the %s member read no rows", name)
		}
	}
	for _, j := range []*sluice.Job{a, c} {
		select {
		case <-j.Done():
			t.Fatalf("a member ended: %v", j.Wait())
		default:
		}
	}
}

// BenchmarkClusterWindow runs the cluster job (Kafka → shuffle topic →
// TUMBLE count per user → exactly-once Kafka sink) as one member over
// 200k bounded rows against the in-process broker: source, shuffle
// writes and reads, state changelog and transactions included.
func BenchmarkClusterWindow(b *testing.B) {
	bs := kafkatest.Start(b, 4, "clicks", "counts")
	const rows = 1_000_000
	kafkatest.ProduceTo(b, bs, "clicks", clicks(0, rows, nil)...)
	b.ResetTimer()
	for i := range b.N {
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		src := strings.NewReplacer("$BOOTSTRAP", bs, "$BOUNDED", `'scan.bounded.mode' = 'latest-offset',`,
			"'counts-job'", fmt.Sprintf("'bench-%d'", i)).Replace(clusterJob)
		if err := e.Run(context.Background(), "job.sql", []byte(src)); err != nil {
			b.Fatal(sluice.FormatError(err, []byte(src)))
		}
		e.Close()
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestClusterLookupJoin runs, in cluster mode, a lookup join in the
// source stage (each member looks its own partitions' rows up in its
// engine's copy of the dimension table) feeding a windowed count per
// region behind the shuffle: the output is exact, and users missing from
// the table are dropped by the INNER join.
func TestClusterLookupJoin(t *testing.T) {
	bs := kafkatest.Start(t, 4, "clicks", "counts")
	dir := t.TempDir()
	var users strings.Builder
	region := map[string]string{}
	for i := range 36 { // u36 has no row
		u := fmt.Sprintf("u%d", i)
		region[u] = fmt.Sprintf("r%d", i%5)
		fmt.Fprintf(&users, "%s,%s\n", u, region[u])
	}
	writeFile(t, dir, "users.csv", users.String())
	byUser := map[string]int{}
	kafkatest.ProduceTo(t, bs, "clicks", clicks(0, 5000, byUser)...)
	want := map[string]int{}
	for k, n := range byUser {
		u, ws, _ := strings.Cut(k, " ")
		if r, ok := region[u]; ok {
			want[r+" "+ws] += n
		}
	}
	src := clusterSQL(bs, strings.NewReplacer("$DIR", dir).Replace(`
$CLUSTER(counts-job, 3)
CREATE TABLE clicks (u STRING, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts) WITH (
  $SOURCE(clicks));
CREATE TABLE users (u STRING, region STRING)
WITH ('connector' = 'filesystem', 'path' = '$DIR/users.csv', 'format' = 'csv');
CREATE TABLE counts (u STRING, ws TIMESTAMP(3), c BIGINT) WITH (
  $SINK(counts));
CREATE VIEW enriched AS
SELECT c.ts, d.region FROM clicks AS c JOIN users FOR SYSTEM_TIME AS OF c.pt AS d ON c.u = d.u;
INSERT INTO counts
SELECT region, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE enriched, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY region, window_start, window_end;
`))
	runClusterSQL(t, src)
	got, rows := counts(t, bs)
	if d := diffCounts(got, want); d != "" {
		t.Fatalf("output differs:\n%s", d)
	}
	if rows != len(want) {
		t.Fatalf("%d output rows for %d windows: duplicates", rows, len(want))
	}
}

// TestClusterJoin runs a regular join of two Kafka topics in cluster mode:
// both inputs go through one shuffle topic, each row to the partition of
// its key, and the join stage's tasks hold the rows of their keys.
// Customers arrive before, among and after their orders; the output is
// every order with its customer, once.
func TestClusterJoin(t *testing.T) {
	bs := kafkatest.Start(t, 4, "orders", "customers", "joined")
	var orders, customers []*kgo.Record
	want := map[string]int{}
	for c := range 50 {
		customers = append(customers, &kgo.Record{Partition: int32(c % 4),
			Value: fmt.Appendf(nil, `{"id":%d,"name":"c%d"}`, c, c)})
	}
	for o := range 3000 {
		c := o % 60 // customers 50..59 do not exist: their orders join nothing
		orders = append(orders, &kgo.Record{Partition: int32(o % 4),
			Value: fmt.Appendf(nil, `{"o":%d,"cust":%d}`, o, c)})
		if c < 50 {
			want[fmt.Sprintf("%d c%d", o, c)]++
		}
	}
	kafkatest.ProduceTo(t, bs, "customers", customers[:20]...)
	kafkatest.ProduceTo(t, bs, "orders", orders[:1500]...)
	kafkatest.ProduceTo(t, bs, "customers", customers[20:]...)
	kafkatest.ProduceTo(t, bs, "orders", orders[1500:]...)
	src := clusterSQL(bs, `
$CLUSTER(join-job, 3)
CREATE TABLE orders (o INT, cust INT) WITH (
  $SOURCE(orders));
CREATE TABLE customers (id INT, name STRING) WITH (
  $SOURCE(customers));
CREATE TABLE joined (o INT, name STRING) WITH (
  $SINK(joined));
INSERT INTO joined SELECT o.o, c.name FROM orders AS o JOIN customers AS c ON o.cust = c.id;
`)
	runClusterSQL(t, src)
	got := map[string]int{}
	for _, r := range kafkatest.ReadAll(t, bs, "joined") {
		var row struct {
			O    int    `json:"o"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(r.Value, &row); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		got[fmt.Sprintf("%d %s", row.O, row.Name)]++
	}
	if d := diffCounts(got, want); d != "" {
		t.Fatalf("output differs:\n%s", d)
	}
	// Both inputs went through the one shuffle topic.
	tds, err := kafkatest.Admin(t, bs).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sides := map[string]int{}
	for _, name := range tds.Names() {
		if strings.HasPrefix(name, "sluice-join-job-") && strings.Contains(name, "shuffle") {
			for _, r := range kafkatest.ReadAll(t, bs, name) {
				if len(r.Headers) == 0 {
					sides[name]++
				}
			}
		}
	}
	if len(sides) != 1 {
		t.Fatalf("shuffle topics with data: %v; want one", sides)
	}
}

// TestClusterTimeJoins runs an interval join and a window join of two
// Kafka topics in cluster mode, in one statement set: both need the
// watermark of both inputs, which the join stage's shuffle reader folds
// from the writers of both sides.
func TestClusterTimeJoins(t *testing.T) {
	bs := kafkatest.Start(t, 4, "orders", "ships", "interval_out", "window_out")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) string { return base.Add(d).Format("2006-01-02 15:04:05.000") }
	var orders, ships []*kgo.Record
	wantInterval, wantWindow := map[string]int{}, map[string]int{}
	for o := range 400 {
		at := time.Duration(o) * 10 * time.Second
		orders = append(orders, &kgo.Record{Partition: int32(o % 4), Value: fmt.Appendf(nil, `{"o":%d,"ts":"%s"}`, o, ts(at))})
		if o%3 == 0 {
			continue // never shipped
		}
		// Shipped 20 s after the order, or, for o%3 == 2, 5 minutes after.
		after := 20 * time.Second
		if o%3 == 2 {
			after = 5 * time.Minute
		}
		ships = append(ships, &kgo.Record{Partition: int32(o % 2), Value: fmt.Appendf(nil, `{"o":%d,"ts":"%s"}`, o, ts(at+after))})
		if after <= time.Minute {
			wantInterval[fmt.Sprint(o)]++
		}
		if (at).Truncate(time.Minute) == (at + after).Truncate(time.Minute) {
			wantWindow[fmt.Sprint(o)]++
		}
	}
	kafkatest.ProduceTo(t, bs, "orders", orders...)
	kafkatest.ProduceTo(t, bs, "ships", ships...)
	src := clusterSQL(bs, `
$CLUSTER(time-joins, 2)
CREATE TABLE orders (o INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  $SOURCE(orders));
CREATE TABLE ships (o INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  $SOURCE(ships));
CREATE TABLE interval_out (o INT) WITH (
  $SINK(interval_out));
CREATE TABLE window_out (o INT) WITH (
  $SINK(window_out));
EXECUTE STATEMENT SET BEGIN
INSERT INTO interval_out SELECT o.o FROM orders AS o, ships AS s
  WHERE o.o = s.o AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE;
INSERT INTO window_out SELECT l.o FROM
  (SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) AS l
  JOIN (SELECT * FROM TABLE(TUMBLE(TABLE ships, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) AS r
  ON l.o = r.o AND l.window_start = r.window_start AND l.window_end = r.window_end;
END;
`)
	runClusterSQL(t, src)
	for topic, want := range map[string]map[string]int{"interval_out": wantInterval, "window_out": wantWindow} {
		got := map[string]int{}
		for _, r := range kafkatest.ReadAll(t, bs, topic) {
			var row struct{ O int }
			if err := json.Unmarshal(r.Value, &row); err != nil {
				t.Fatalf("record %s: %v", r.Value, err)
			}
			got[fmt.Sprint(row.O)]++
		}
		if len(want) == 0 {
			t.Fatalf("%s: the test expects nothing", topic)
		}
		if d := diffCounts(got, want); d != "" {
			t.Errorf("%s differs:\n%s", topic, d)
		}
	}
}

// TestClusterJoinThenAggregate runs, in cluster mode, a join whose output
// is re-keyed again (the join stage reads one shuffle topic and writes
// another) into a GROUP BY, written to upsert-kafka: the latest count per
// region is the number of orders of its customers.
func TestClusterJoinThenAggregate(t *testing.T) {
	bs := kafkatest.Start(t, 4, "orders", "customers", "totals")
	var orders, customers []*kgo.Record
	want := map[string]int{}
	for c := range 50 {
		customers = append(customers, &kgo.Record{Partition: int32(c % 4), Value: fmt.Appendf(nil, `{"id":%d,"region":"r%d"}`, c, c%7)})
	}
	for o := range 3000 {
		c := o % 60 // customers 50..59 do not exist
		orders = append(orders, &kgo.Record{Partition: int32(o % 4), Value: fmt.Appendf(nil, `{"o":%d,"cust":%d}`, o, c)})
		if c < 50 {
			want[fmt.Sprintf("r%d", c%7)]++
		}
	}
	kafkatest.ProduceTo(t, bs, "customers", customers...)
	kafkatest.ProduceTo(t, bs, "orders", orders...)
	src := clusterSQL(bs, `
$CLUSTER(join-agg, 3)
CREATE TABLE orders (o INT, cust INT) WITH (
  $SOURCE(orders));
CREATE TABLE customers (id INT, region STRING) WITH (
  $SOURCE(customers));
CREATE TABLE totals (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO totals SELECT c.region, COUNT(*) FROM orders AS o JOIN customers AS c ON o.cust = c.id GROUP BY c.region;
`)
	runClusterSQL(t, src)
	got := latestCounts(t, bs, "totals", "region", "n")
	if d := diffCounts(got, want); d != "" {
		t.Fatalf("latest counts differ:\n%s", d)
	}
}

// TestClusterUnion runs, in cluster mode, a UNION ALL of two Kafka topics
// feeding a GROUP BY (each input writes the shuffle topic, the union's
// projection applied on its way), joined with users (each input writes the
// join's shuffle topic) and, in the same statement set, written out as it
// is (merged in the member).
func TestClusterUnion(t *testing.T) {
	bs := kafkatest.Start(t, 4, "web", "app", "users", "per_user", "all_clicks", "regions")
	var web, app []*kgo.Record
	want, wantAll, wantRegions := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range 2000 {
		u := fmt.Sprintf("u%d", i%23)
		rec := &kgo.Record{Partition: int32(i % 4), Value: fmt.Appendf(nil, `{"u":"%s","n":%d}`, u, i)}
		if i%3 == 0 {
			app = append(app, rec)
		} else {
			web = append(web, rec)
		}
		if i%5 != 0 { // the WHERE after the union drops n % 5 = 0
			want[u]++
			wantAll[fmt.Sprint(i)]++
			wantRegions[fmt.Sprintf("%d r%d", i, i%23%4)]++
		}
	}
	var users []*kgo.Record
	for i := range 23 {
		users = append(users, &kgo.Record{Partition: int32(i % 4), Value: fmt.Appendf(nil, `{"u":"u%d","region":"r%d"}`, i, i%4)})
	}
	kafkatest.ProduceTo(t, bs, "users", users...)
	kafkatest.ProduceTo(t, bs, "web", web...)
	kafkatest.ProduceTo(t, bs, "app", app...)
	src := clusterSQL(bs, `
$CLUSTER(union-job, 3)
CREATE TABLE web (u STRING, n INT) WITH (
  $SOURCE(web));
CREATE TABLE app (u STRING, n INT) WITH (
  $SOURCE(app));
CREATE TABLE per_user (u STRING, c BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'per_user', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE all_clicks (n INT) WITH (
  $SINK(all_clicks));
CREATE TABLE users (u STRING, region STRING) WITH (
  $SOURCE(users));
CREATE TABLE regions (n INT, region STRING) WITH (
  $SINK(regions));
CREATE VIEW clicks AS SELECT * FROM (SELECT u, n FROM web UNION ALL SELECT u, n FROM app) WHERE MOD(n, 5) <> 0;
EXECUTE STATEMENT SET BEGIN
INSERT INTO per_user SELECT u, COUNT(*) FROM clicks GROUP BY u;
INSERT INTO all_clicks SELECT n FROM clicks;
INSERT INTO regions SELECT c.n, us.region FROM clicks AS c JOIN users AS us ON c.u = us.u;
END;
`)
	runClusterSQL(t, src)
	got := latestCounts(t, bs, "per_user", "u", "c")
	if d := diffCounts(got, want); d != "" {
		t.Errorf("per-user counts differ:\n%s", d)
	}
	gotAll := map[string]int{}
	for _, r := range kafkatest.ReadAll(t, bs, "all_clicks") {
		var v struct{ N int }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("value %s: %v", r.Value, err)
		}
		gotAll[fmt.Sprint(v.N)]++
	}
	if d := diffCounts(gotAll, wantAll); d != "" {
		t.Errorf("the union as it is differs:\n%s", d)
	}
	gotRegions := map[string]int{}
	for _, r := range kafkatest.ReadAll(t, bs, "regions") {
		var v struct {
			N      int
			Region string
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("value %s: %v", r.Value, err)
		}
		gotRegions[fmt.Sprintf("%d %s", v.N, v.Region)]++
	}
	if d := diffCounts(gotRegions, wantRegions); d != "" {
		t.Errorf("the union joined with users differs:\n%s", d)
	}
}

// runClusterSQL runs the statements of src in an engine of their own (a
// member of the cluster they name), until their bounded jobs end.
func runClusterSQL(t *testing.T, src string) {
	t.Helper()
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Run(ctx, "job.sql", []byte(src)); err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
}

// latestCounts applies the upsert-kafka topic's records (JSON keys with
// the string field key, JSON values with the integer field value,
// tombstones) and returns the latest value per key.
func latestCounts(t *testing.T, bs, topic, key, value string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, r := range kafkatest.ReadAll(t, bs, topic) {
		var k, v map[string]any
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key %s: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(got, fmt.Sprint(k[key]))
			continue
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("value %s: %v", r.Value, err)
		}
		n, ok := v[value].(float64)
		if !ok {
			t.Fatalf("value %s: no number %q", r.Value, value)
		}
		got[fmt.Sprint(k[key])] = int(n)
	}
	return got
}

// clusterSQL expands the shorthands of the cluster tests' SQL:
// $CLUSTER(group, parallelism) is the SET statements of a cluster job with
// its state in Kafka; $SOURCE(topic) the options of a bounded Kafka JSON
// table; $SINK(topic) those of an exactly-once Kafka JSON sink.
func clusterSQL(bs, src string) string {
	src = regexp.MustCompile(`\$CLUSTER\(([\w-]+), (\d+)\)`).ReplaceAllString(src, `SET 'cluster.group-id' = '$1';
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$$BOOTSTRAP';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '$2';`)
	src = regexp.MustCompile(`\$SOURCE\((\w+)\)`).ReplaceAllString(src, `'connector' = 'kafka', 'topic' = '$1', 'properties.bootstrap.servers' = '$$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'`)
	src = regexp.MustCompile(`\$SINK\((\w+)\)`).ReplaceAllString(src, `'connector' = 'kafka', 'topic' = '$1', 'properties.bootstrap.servers' = '$$BOOTSTRAP', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '$1'`)
	return strings.ReplaceAll(src, "$BOOTSTRAP", bs)
}

// TestClusterSetOps runs, in cluster mode, a null-aware NOT IN (one task
// holds both sides: no other key) and an EXCEPT ALL, each counted per
// user into upsert-kafka.
func TestClusterSetOps(t *testing.T) {
	bs := kafkatest.Start(t, 4, "web", "app", "blocked", "allowed", "more_web")
	var web, app []*kgo.Record
	allowed, moreWeb := map[string]int{}, map[string]int{}
	webN, appN := map[string]int{}, map[string]int{}
	for i := range 1200 {
		u := fmt.Sprintf("u%d", i%13)
		if i%50 == 0 {
			web = append(web, &kgo.Record{Partition: int32(i % 4), Value: []byte(`{"u":null}`)})
			continue // a NULL user: NOT IN is unknown (blocked has rows)
		}
		if i%4 == 0 {
			app = append(app, &kgo.Record{Partition: int32(i % 4), Value: fmt.Appendf(nil, `{"u":"%s"}`, u)})
			appN[u]++
			continue
		}
		web = append(web, &kgo.Record{Partition: int32(i % 4), Value: fmt.Appendf(nil, `{"u":"%s"}`, u)})
		webN[u]++
		if u != "u1" && u != "u2" {
			allowed[u]++
		}
	}
	for u, n := range webN {
		if d := n - appN[u]; d > 0 {
			moreWeb[u] = d
		}
	}
	kafkatest.ProduceTo(t, bs, "blocked", &kgo.Record{Value: []byte(`{"u":"u1"}`)}, &kgo.Record{Partition: 1, Value: []byte(`{"u":"u2"}`)})
	kafkatest.ProduceTo(t, bs, "web", web...)
	kafkatest.ProduceTo(t, bs, "app", app...)
	src := clusterSQL(bs, `
$CLUSTER(setops-job, 3)
CREATE TABLE web (u STRING) WITH (
  $SOURCE(web));
CREATE TABLE app (u STRING) WITH (
  $SOURCE(app));
CREATE TABLE blocked (u STRING) WITH (
  $SOURCE(blocked));
CREATE TABLE allowed (u STRING, c BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'allowed', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE more_web (u STRING, c BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'more_web', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO allowed SELECT u, COUNT(*) FROM web WHERE u NOT IN (SELECT u FROM blocked) GROUP BY u;
INSERT INTO more_web SELECT u, COUNT(*) FROM (SELECT u FROM web WHERE u IS NOT NULL EXCEPT ALL SELECT u FROM app) GROUP BY u;
END;
`)
	runClusterSQL(t, src)
	if d := diffCounts(latestCounts(t, bs, "allowed", "u", "c"), allowed); d != "" {
		t.Errorf("NOT IN counts differ:\n%s", d)
	}
	if d := diffCounts(latestCounts(t, bs, "more_web", "u", "c"), moreWeb); d != "" {
		t.Errorf("EXCEPT ALL counts differ:\n%s", d)
	}
}
