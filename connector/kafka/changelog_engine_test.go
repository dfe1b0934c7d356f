package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// TestEngineChangelogRestart reads a debezium-json topic (each id's
// changes in one partition, in order), aggregates it by k into an
// exactly-once upsert-kafka table with the state in Kafka, is cancelled
// midway and started again: the upsert topic ends with the aggregate of
// the captured table's final rows. The updates' -U/+U rows share their
// record's Kafka offset, so this checks that positions and resumption
// number the rows of a record.
func TestEngineChangelogRestart(t *testing.T) {
	bs := kafkatest.Start(t, 4, "cdc", "totals")
	type row struct {
		ID int    `json:"id"`
		K  string `json:"k"`
		V  int64  `json:"v"`
	}
	rng := rand.New(rand.NewPCG(3, 4))
	table := map[int]row{}
	var recs []*kgo.Record
	event := func(id int, before, after *row, op string) {
		v, err := json.Marshal(map[string]any{"before": before, "after": after, "op": op})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Partition: int32(id % 4), Value: v})
	}
	for i := range 3000 {
		id := rng.IntN(200)
		old, ok := table[id]
		switch {
		case !ok:
			r := row{id, fmt.Sprintf("k%d", rng.IntN(8)), rng.Int64N(100)}
			table[id] = r
			event(id, nil, &r, "c")
		case i%5 == 0:
			delete(table, id)
			event(id, &old, nil, "d")
		default:
			r := row{id, fmt.Sprintf("k%d", rng.IntN(8)), rng.Int64N(100)}
			table[id] = r
			event(id, &old, &r, "u")
		}
	}
	want := map[string]string{}
	sums, counts := map[string]int64{}, map[string]int64{}
	for _, r := range table {
		sums[r.K] += r.V
		counts[r.K]++
	}
	for k := range sums {
		want[fmt.Sprintf(`{"k":"%s"}`, k)] = fmt.Sprintf(`{"k":"%s","total":%d,"n":%d}`, k, sums[k], counts[k])
	}

	kafkatest.ProduceTo(t, bs, "cdc", recs[:len(recs)/2]...)
	ddl := func(bounded string) string {
		return strings.ReplaceAll(`
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE cdc (id INT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'cdc',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'scan.startup.mode' = 'earliest-offset',
  'format' = 'debezium-json'`+bounded+`);
CREATE TABLE totals (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'totals');
INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM cdc GROUP BY k;
`, "$BOOTSTRAP", bs)
	}
	// First run: unbounded; cancelled once some output has committed.
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(ddl(""))
	res, err := e.Exec(context.Background(), "job.sql", src)
	if err != nil {
		t.Fatal(sluice.FormatError(err, src))
	}
	job := res[len(res)-1].Job
	deadline := time.Now().Add(20 * time.Second)
	for len(kafkatest.ReadAll(t, bs, "totals")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no output committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	job.Cancel()
	job.Wait()
	e.Close()

	kafkatest.ProduceTo(t, bs, "cdc", recs[len(recs)/2:]...)
	runSQL(t, bs, ddl(", 'scan.bounded.mode' = 'latest-offset'"))

	final := map[string]string{}
	for _, r := range kafkatest.ReadAll(t, bs, "totals") {
		if r.Value == nil {
			delete(final, string(r.Key))
		} else {
			final[string(r.Key)] = string(r.Value)
		}
	}
	if fmt.Sprint(sorted(final)) != fmt.Sprint(sorted(want)) {
		t.Fatalf("final upserts\n got %v\nwant %v", sorted(final), sorted(want))
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}
