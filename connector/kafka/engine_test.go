package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// runSQL runs src, with $BOOTSTRAP replaced, in a fresh engine.
func runSQL(t testing.TB, bootstrap, src string) string {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src = strings.ReplaceAll(src, "$BOOTSTRAP", bootstrap)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Run(ctx, "test.sql", []byte(src)); err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	return out.String()
}

// TestEngineTumbleExactlyOnce runs a windowed aggregation from a bounded
// four-partition topic into an exactly-once Kafka sink: with the sink's
// transaction committed at the end of the job, and with checkpoints every
// 20 ms driving the commits.
func TestEngineTumbleExactlyOnce(t *testing.T) {
	t.Run("end-of-job commit", func(t *testing.T) { testEngineTumble(t, "") })
	t.Run("checkpointed", func(t *testing.T) {
		testEngineTumble(t, "SET 'execution.checkpointing.interval' = '20ms';")
	})
}

func testEngineTumble(t *testing.T, settings string) {
	bs := kafkatest.Start(t, 4, "bids", "totals")
	base := time.Date(2020, 4, 15, 8, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	want := map[string][2]float64{} // window start → count, sum
	for i := range 200 {
		ts := base.Add(time.Duration(i*17) * time.Second) // 0 .. 56 minutes
		price := float64(i%7) + 0.5
		recs = append(recs, &kgo.Record{
			Partition: int32(i % 4),
			Value:     fmt.Appendf(nil, `{"bidtime":"%s","price":%g,"item":"i%d"}`, ts.Format("2006-01-02 15:04:05.000"), price, i),
		})
		w := ts.Truncate(10 * time.Minute).Format("2006-01-02 15:04:05")
		c := want[w]
		want[w] = [2]float64{c[0] + 1, c[1] + price}
	}
	// A malformed record, skipped by the error policy.
	recs = append(recs, &kgo.Record{Partition: 2, Value: []byte(`{"bidtime":"not a time"}`)})
	kafkatest.ProduceTo(t, bs, "bids", recs...)

	runSQL(t, bs, settings+`
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DOUBLE,
  item STRING,
  part INT METADATA FROM 'partition' VIRTUAL,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'bids',
  'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);
CREATE TABLE totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  n BIGINT,
  total DOUBLE,
  parts BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'totals',
  'properties.bootstrap.servers' = '$BOOTSTRAP',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'totals-job'
);
INSERT INTO totals
SELECT window_start, window_end, COUNT(*), SUM(price), COUNT(DISTINCT part)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
`)

	var got []string
	for _, r := range kafkatest.ReadAll(t, bs, "totals") {
		var row struct {
			Start string  `json:"window_start"`
			End   string  `json:"window_end"`
			N     float64 `json:"n"`
			Total float64 `json:"total"`
			Parts int     `json:"parts"`
		}
		if err := json.Unmarshal(r.Value, &row); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		got = append(got, fmt.Sprintf("%s %s %g %g %d", row.Start, row.End, row.N, row.Total, row.Parts))
	}
	var wantRows []string
	for w, c := range want {
		start, _ := time.Parse("2006-01-02 15:04:05", w)
		wantRows = append(wantRows, fmt.Sprintf("%s %s %g %g 4", w, start.Add(10*time.Minute).Format("2006-01-02 15:04:05"), c[0], c[1]))
	}
	sort.Strings(got)
	sort.Strings(wantRows)
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
}

// TestEngineUpsertKafka runs an updating aggregation into upsert-kafka and
// reads the changelog back.
func TestEngineUpsertKafka(t *testing.T) {
	bs := kafkatest.Start(t, 2, "clicks", "counts")
	var recs []*kgo.Record
	for i, user := range []string{"ann", "bob", "ann", "cy", "ann", "bob"} {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"user":"%s"}`, user)})
	}
	kafkatest.ProduceTo(t, bs, "clicks", recs...)
	const ddl = `
CREATE TABLE clicks (user STRING) WITH (
  'connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE counts (user STRING, n BIGINT, PRIMARY KEY (user) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'counts', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
`
	insert := ddl + "INSERT INTO counts SELECT user, COUNT(*) FROM clicks GROUP BY user;"
	runSQL(t, bs, insert)
	// A second run over more clicks updates two keys.
	kafkatest.ProduceTo(t, bs, "clicks", &kgo.Record{Value: []byte(`{"user":"ann"}`)}, &kgo.Record{Value: []byte(`{"user":"dee"}`)})
	runSQL(t, bs, insert)
	out := runSQL(t, bs, ddl+"SELECT user, n FROM counts;")

	final := map[string]string{}
	for _, r := range kafkatest.ReadAll(t, bs, "counts") {
		final[string(r.Key)] = string(r.Value)
	}
	want := map[string]string{
		`{"user":"ann"}`: `{"user":"ann","n":4}`,
		`{"user":"bob"}`: `{"user":"bob","n":2}`,
		`{"user":"cy"}`:  `{"user":"cy","n":1}`,
		`{"user":"dee"}`: `{"user":"dee","n":1}`,
	}
	if fmt.Sprint(final) != fmt.Sprint(want) {
		t.Fatalf("final records %v", final)
	}
	// The changelog read back, normalized: per key, +I first, then each
	// update as -U of the row before and +U of the new one, ending at
	// the final count. (How many updates the aggregation emitted depends
	// on how its input was batched.)
	last := map[string]string{}
	updates := 0
	retracted := ""
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		kind, rest, _ := strings.Cut(line, "[")
		user, n, _ := strings.Cut(strings.TrimSuffix(rest, "]"), ", ")
		prev, seen := last[user]
		ok := false
		switch kind {
		case "+I":
			ok = !seen && retracted == ""
		case "-U":
			ok = seen && prev == n && retracted == ""
			retracted = user
		case "+U":
			ok = retracted == user
			retracted = ""
			updates++
		}
		if !ok {
			t.Fatalf("changelog line %q after %v:\n%s", line, last, out)
		}
		last[user] = n
	}
	if fmt.Sprint(last) != "map[ann:4 bob:2 cy:1 dee:1]" || updates == 0 {
		t.Fatalf("changelog:\n%s", out)
	}
}

// With the state in Kafka, a job cancelled midway (as good as a crash: its
// open transaction never commits) and started again writes every input
// record to the exactly-once sink exactly once.
func TestEngineRestartWithKafkaState(t *testing.T) {
	bs := kafkatest.Start(t, 4, "in", "out")
	const n = 4000
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Partition: int32(i % 4), Value: fmt.Appendf(nil, `{"id":%d}`, i)})
	}
	kafkatest.ProduceTo(t, bs, "in", recs[:n/2]...)
	ddl := func(bounded string) string {
		return `
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json'` + bounded + `);
CREATE TABLE dst (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'dst');
INSERT INTO dst SELECT id FROM src WHERE id >= 0;
`
	}
	// First run: unbounded; cancelled once some output has committed.
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(strings.ReplaceAll(ddl(""), "$BOOTSTRAP", bs))
	res, err := e.Exec(context.Background(), "job.sql", src)
	if err != nil {
		t.Fatal(sluice.FormatError(err, src))
	}
	job := res[len(res)-1].Job
	deadline := time.Now().Add(20 * time.Second)
	for len(kafkatest.ReadAll(t, bs, "out")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no output committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	job.Cancel()
	job.Wait()
	e.Close()
	first := len(kafkatest.ReadAll(t, bs, "out"))

	kafkatest.ProduceTo(t, bs, "in", recs[n/2:]...)
	runSQL(t, bs, ddl(", 'scan.bounded.mode' = 'latest-offset'"))

	seen := map[string]int{}
	for _, r := range kafkatest.ReadAll(t, bs, "out") {
		seen[string(r.Value)]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf(`{"id":%d}`, i)]; c != 1 {
			t.Errorf("id %d written %d times (first run committed %d records)", i, c, first)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct records, want %d", len(seen), n)
	}
}

// TestEngineUpsertKafkaAggregate: a GROUP BY over an upsert-kafka table
// sees each key's replaced row retracted and its deleted row removed (the
// scan is followed by a ChangelogNormalize), so the totals are those of
// the table's final rows.
func TestEngineUpsertKafkaAggregate(t *testing.T) {
	bs := kafkatest.Start(t, 2, "prices")
	rec := func(k, v string) *kgo.Record {
		r := &kgo.Record{Key: fmt.Appendf(nil, `{"k":"%s"}`, k), Partition: int32(len(k) % 2)}
		if v != "" {
			r.Value = fmt.Appendf(nil, `{"k":"%s","cat":"%s","v":%s}`, k, v[:1], v[1:])
		}
		return r
	}
	// Final rows: aa = x5, c = y3, dd = x7 (b deleted; dd moved from y
	// to x; c written twice with the same row).
	kafkatest.ProduceTo(t, bs, "prices", rec("aa", "x1"), rec("b", "x2"), rec("aa", "x5"), rec("b", ""),
		rec("c", "y3"), rec("dd", "y4"), rec("c", "y3"), rec("dd", "x7"), rec("zz", ""))
	out := runSQL(t, bs, `
CREATE TABLE prices (k STRING, cat STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'prices', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
SELECT cat, SUM(v) AS total, COUNT(*) AS n FROM prices GROUP BY cat;`)
	final := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		kind, rest, _ := strings.Cut(line, "[")
		cat, vals, _ := strings.Cut(strings.TrimSuffix(rest, "]"), ", ")
		switch kind {
		case "+I", "+U":
			final[cat] = vals
		case "-D":
			delete(final, cat)
		}
	}
	if got, want := fmt.Sprint(final), "map[x:12, 2 y:3, 1]"; got != want {
		t.Fatalf("totals %s, want %s:\n%s", got, want, out)
	}
}
