package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/types"
)

// bidBatch returns rows (id, item) for ids from..to-1 with the given kind.
func bidBatch(kind types.RowKind, from, to int) *types.Batch {
	b := types.NewBatch(to-from, 2)
	for i := from; i < to; i++ {
		v := b.AddRow(kind, types.NoOrigin, 2)
		v[0] = types.Int32Value(int32(i))
		v[1] = types.StringValue(fmt.Sprintf("i%d", i))
	}
	return b
}

func values(recs []*kgo.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return strings.Join(out, " ")
}

func TestSinkAtLeastOnce(t *testing.T) {
	bs := kafkatest.Start(t, 1, "out")
	ctx := context.Background()
	for _, guarantee := range []string{"at-least-once", "none"} {
		s := newSink(t, table("out", bidSchema(), bs, "out", connector.Options{"sink.delivery-guarantee": guarantee, "sink.partitioner": "fixed"}))
		if err := s.Write(ctx, bidBatch(types.Insert, 0, 2)); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, bidBatch(types.UpdateAfter, 2, 3)); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"id":0,"item":"i0"} {"id":1,"item":"i1"} {"id":2,"item":"i2"}`
	if got := values(kafkatest.ReadAll(t, bs, "out")); got != want+" "+want {
		t.Fatalf("records: %s", got)
	}

	// Updates and deletes need upsert-kafka.
	s := newSink(t, table("out", bidSchema(), bs, "out", nil))
	defer s.Close()
	err := s.Write(ctx, bidBatch(types.Delete, 0, 1))
	if err == nil || err.Error() != "kafka sink 'out' cannot take updates/deletes (got a -D row): use the 'upsert-kafka' connector with a PRIMARY KEY for an updating query" {
		t.Fatalf("err = %v", err)
	}
}

func TestSinkPartitioners(t *testing.T) {
	bs := kafkatest.Start(t, 3, "rr", "fixed", "keyed")
	ctx := context.Background()
	count := func(topic string) map[int32]int {
		m := map[int32]int{}
		for _, r := range kafkatest.ReadAll(t, bs, topic) {
			m[r.Partition]++
		}
		return m
	}
	for _, p := range []string{"round-robin", "fixed"} {
		topic := map[string]string{"round-robin": "rr", "fixed": "fixed"}[p]
		s := newSink(t, table("out", bidSchema(), bs, topic, connector.Options{"sink.partitioner": p}))
		for i := range 6 {
			if err := s.Write(ctx, bidBatch(types.Insert, i, i+1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := count("rr"); got[0] != 2 || got[1] != 2 || got[2] != 2 {
		t.Errorf("round-robin: %v", got)
	}
	if got := count("fixed"); got[0] != 6 {
		t.Errorf("fixed: %v", got)
	}
	// The default partitioner sends equal keys to one partition.
	s := newSink(t, table("out", bidSchema(), bs, "keyed", connector.Options{"key.format": "json", "key.fields": "item"}))
	for range 3 {
		b := types.NewBatch(4, 2)
		for _, item := range []string{"a", "b", "c", "d"} {
			b.AddRow(types.Insert, types.NoOrigin, 2)[1] = types.StringValue(item)
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	parts := map[string]map[int32]bool{}
	for _, r := range kafkatest.ReadAll(t, bs, "keyed") {
		if parts[string(r.Key)] == nil {
			parts[string(r.Key)] = map[int32]bool{}
		}
		parts[string(r.Key)][r.Partition] = true
	}
	for k, ps := range parts {
		if len(ps) != 1 {
			t.Errorf("key %s in partitions %v", k, ps)
		}
	}
}

func TestSinkExactlyOnce(t *testing.T) {
	bs := kafkatest.Start(t, 2, "out")
	ctx := context.Background()
	opts := connector.Options{
		"sink.delivery-guarantee":      "exactly-once",
		"sink.transactional-id-prefix": "test",
		"sink.transaction.interval":    "1 h",
	}
	s := newSink(t, table("out", bidSchema(), bs, "out", opts))
	if err := s.Write(ctx, bidBatch(types.Insert, 0, 3)); err != nil {
		t.Fatal(err)
	}
	// Nothing is visible before the commit, even once acknowledged.
	if err := s.cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := kafkatest.ReadAll(t, bs, "out"); len(got) != 0 {
		t.Fatalf("before the commit: %s", values(got))
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := kafkatest.ReadAll(t, bs, "out"); len(got) != 3 {
		t.Fatalf("after the commit: %s", values(got))
	}

	// Abort discards the open transaction; writing goes on after it.
	if err := s.Write(ctx, bidBatch(types.Insert, 10, 12)); err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, bidBatch(types.Insert, 20, 21)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := kafkatest.ReadAll(t, bs, "out")
	if len(got) != 4 || strings.Contains(values(got), `"id":1`+"1") || !strings.Contains(values(got), `"id":20`) {
		t.Fatalf("after abort and close: %s", values(got))
	}

	// A failed write aborts the open transaction at Close: the rows before
	// the failure in the same and earlier batches are not visible.
	s = newSink(t, table("out", bidSchema(), bs, "out", opts))
	if err := s.Write(ctx, bidBatch(types.Insert, 30, 32)); err != nil {
		t.Fatal(err)
	}
	b := bidBatch(types.Insert, 40, 41)
	b.AddRow(types.Delete, types.NoOrigin, 2)
	if err := s.Write(ctx, b); err == nil {
		t.Fatal("a -D row was written")
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "cannot take updates/deletes") {
		t.Fatalf("close: %v", err)
	}
	if got := kafkatest.ReadAll(t, bs, "out"); len(got) != 4 {
		t.Fatalf("after a failed write: %s", values(got))
	}
}

func TestSinkTransactionInterval(t *testing.T) {
	bs := kafkatest.Start(t, 1, "out")
	ctx := context.Background()
	s := newSink(t, table("out", bidSchema(), bs, "out", connector.Options{
		"sink.delivery-guarantee":      "exactly-once",
		"sink.transactional-id-prefix": "interval",
		"sink.transaction.interval":    "20 ms",
	}))
	defer s.Close()
	if err := s.Write(ctx, bidBatch(types.Insert, 0, 2)); err != nil {
		t.Fatal(err)
	}
	// The records become visible without Flush; wait for the commit.
	deadline := time.Now().Add(30 * time.Second)
	for len(kafkatest.ReadAll(t, bs, "out")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the transaction was never committed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSinkOptionErrors(t *testing.T) {
	bs := kafkatest.Start(t, 1, "out")
	for _, tc := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"topic": "nope"}, "topic 'nope' does not exist on"},
		{connector.Options{"topic": "out;other"}, "option 'topic' must name exactly one"},
		{connector.Options{"sink.delivery-guarantee": "exactly-once"}, "missing required option 'sink.transactional-id-prefix'"},
		{connector.Options{"sink.delivery-guarantee": "twice"}, "option 'sink.delivery-guarantee': unsupported value 'twice'"},
		{connector.Options{"sink.partitioner": "org.example.MyPartitioner"}, "option 'sink.partitioner': unsupported value"},
		{connector.Options{"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "p", "properties.acks": "1"}, "needs 'properties.acks' = 'all'"},
	} {
		tbl := table("out", bidSchema(), bs, "out", tc.opts)
		_, err := registry().Sink(tbl, env(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v\nwant %s", tc.opts, err, tc.want)
		}
	}
}

func TestUpsertRoundTrip(t *testing.T) {
	bs := kafkatest.Start(t, 1, "users")
	schema := types.NewSchema(
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "name", Type: types.String},
	)
	tbl := connector.Table{Name: "users", Schema: schema, PrimaryKey: []string{"id"}, Options: connector.Options{
		"connector":                    "upsert-kafka",
		"topic":                        "users",
		"properties.bootstrap.servers": bs,
		"key.format":                   "json",
		"value.format":                 "json",
		"value.fields-include":         "EXCEPT_KEY",
		"scan.bounded.mode":            "latest-offset",
	}}
	if !NewUpsert().AcceptsChangelog(tbl, connector.Env{}) {
		t.Fatal("upsert-kafka refuses a changelog")
	}
	s := newSink(t, tbl)
	b := types.NewBatch(8, 2)
	add := func(kind types.RowKind, id int32, name string) {
		v := b.AddRow(kind, types.NoOrigin, 2)
		v[0] = types.Int32Value(id)
		if name != "" {
			v[1] = types.StringValue(name)
		}
	}
	add(types.Insert, 1, "ann")
	add(types.Insert, 2, "bob")
	add(types.UpdateBefore, 1, "ann")
	add(types.UpdateAfter, 1, "anne")
	add(types.Delete, 2, "bob")
	add(types.Insert, 3, "cy")
	ctx := context.Background()
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var raw []string
	for _, r := range kafkatest.ReadAll(t, bs, "users") {
		v := "<tombstone>"
		if r.Value != nil {
			v = string(r.Value)
		}
		raw = append(raw, string(r.Key)+"="+v)
	}
	want := `[{"id":1}={"name":"ann"} {"id":2}={"name":"bob"} {"id":1}={"name":"anne"} {"id":2}=<tombstone> {"id":3}={"name":"cy"}]`
	if fmt.Sprint(raw) != want {
		t.Fatalf("records %s\nwant %s", raw, want)
	}
	// A tombstone of a key never seen is dropped; a record without a key is
	// malformed.
	kafkatest.Produce(t, bs, "users", &kgo.Record{Key: []byte(`{"id":9}`)}, record("", `{"name":"nokey"}`))
	tbl.Options["value.json.ignore-parse-errors"] = "true"
	src := newSource(t, tbl)
	rows := readAll(t, src)
	got := fmt.Sprint(rowStrings(rows))
	if want := "[+I[1, ann] +I[2, bob] +U[1, anne] -D[2, NULL] +I[3, cy]]"; got != want {
		t.Fatalf("rows %s\nwant %s", got, want)
	}
	if src.(*Source).Skipped() != 1 {
		t.Fatalf("skipped = %d", src.(*Source).Skipped())
	}
}

// TestSourceReadsTransactions reads a topic written in transactions, one of
// them aborted: a bounded read-committed reader sees the committed rows
// and ends although the topic ends with a transaction marker; a
// read-uncommitted reader sees the aborted rows too.
func TestSourceReadsTransactions(t *testing.T) {
	bs := kafkatest.Start(t, 1, "tx")
	ctx := context.Background()
	s := newSink(t, table("tx", bidSchema(), bs, "tx", connector.Options{
		"sink.delivery-guarantee":      "exactly-once",
		"sink.transactional-id-prefix": "tx",
		"sink.transaction.interval":    "1 h",
	}))
	for i, commit := range []bool{true, false, true} {
		if err := s.Write(ctx, bidBatch(types.Insert, 10*i, 10*i+2)); err != nil {
			t.Fatal(err)
		}
		var err error
		if commit {
			err = s.Flush(ctx)
		} else if err = s.cl.Flush(ctx); err == nil { // on the log, then aborted
			err = s.Abort(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	bounded := connector.Options{"scan.bounded.mode": "latest-offset"}
	if got := ids(readAll(t, newSource(t, table("tx", bidSchema(), bs, "tx", bounded)))); got != "0@0,1@1,20@6,21@7" {
		t.Errorf("read committed: %s", got)
	}
	bounded["properties.isolation.level"] = "read_uncommitted"
	if got := ids(readAll(t, newSource(t, table("tx", bidSchema(), bs, "tx", bounded)))); got != "0@0,1@1,10@3,11@4,20@6,21@7" {
		t.Errorf("read uncommitted: %s", got)
	}
}
