package kafka

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/types"
)

func bidSchema() types.Schema {
	return types.NewSchema(
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "item", Type: types.String},
	)
}

func TestBoundedSourceMetadata(t *testing.T) {
	bs := kafkatest.Start(t, 4, "bids")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for p := range 4 {
		for i := range 3 {
			id := p*10 + i
			recs = append(recs, &kgo.Record{
				Partition: int32(p),
				Value:     fmt.Appendf(nil, `{"id":%d,"item":"i%d"}`, id, id),
				Timestamp: base.Add(time.Duration(id) * time.Second),
				Headers:   []kgo.RecordHeader{{Key: "h", Value: []byte("x")}, {Key: "h", Value: []byte{byte(id)}}},
			})
		}
	}
	kafkatest.ProduceTo(t, bs, "bids", recs...)

	tbl := table("bids", bidSchema(), bs, "bids", connector.Options{"scan.bounded.mode": "latest-offset"})
	tbl.Metadata = []connector.MetadataColumn{
		{Name: "t", Key: "topic", Type: types.String},
		{Name: "p", Key: "partition", Type: types.Int},
		{Name: "o", Key: "offset", Type: types.BigInt},
		{Name: "ts", Key: "timestamp", Type: types.TimestampLTZ(3)},
		{Name: "tt", Key: "timestamp-type", Type: types.String},
		{Name: "hs", Key: "headers", Type: types.MapOf(types.String, types.Bytes)},
		{Name: "le", Key: "leader-epoch", Type: types.Int},
	}
	s := newSource(t, tbl)
	if s.Partitions() != 4 || !s.Bounded() {
		t.Fatalf("partitions = %d, bounded = %v", s.Partitions(), s.Bounded())
	}
	for p := range 4 {
		ctx := context.Background()
		r, err := s.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// The end was captured at Open: a record produced now is not read.
		kafkatest.ProduceTo(t, bs, "bids", &kgo.Record{Partition: int32(p), Value: []byte(`{"id":99}`)})
		rows := readN(t, r, 3)
		b := types.NewBatch(4, 9)
		if err := r.Read(ctx, b, 10); err == nil || err.Error() != "EOF" || len(b.Rows) != 0 {
			t.Fatalf("partition %d: after the end: %d rows, err = %v", p, len(b.Rows), err)
		}
		r.Close()
		for i, row := range rows {
			id := p*10 + i
			if row.Kind != types.Insert || row.Origin != (types.Origin{Part: int32(p), Offset: int64(i)}) || len(row.Vals) != 9 {
				t.Fatalf("partition %d row %d: %+v", p, i, row)
			}
			v := row.Vals
			if v[0].Int() != int64(id) || v[1].Str() != fmt.Sprintf("i%d", id) {
				t.Errorf("row %d/%d: values %v %v", p, i, v[0], v[1])
			}
			if v[2].Str() != "bids" || v[2].Kind() != types.KindVarChar || v[3].Int() != int64(p) || v[3].Kind() != types.KindInt || v[4].Int() != int64(i) {
				t.Errorf("row %d/%d: topic/partition/offset %v %v %v", p, i, v[2], v[3], v[4])
			}
			if want := base.Add(time.Duration(id) * time.Second).UnixMicro(); v[5].Int() != want || v[5].Kind() != types.KindTimestampLTZ {
				t.Errorf("row %d/%d: timestamp %v, want %d", p, i, v[5], want)
			}
			if v[6].Str() != "CreateTime" {
				t.Errorf("row %d/%d: timestamp-type %v", p, i, v[6])
			}
			m := v[7].Map()
			if m == nil || len(m.Keys) != 1 || m.Keys[0].Str() != "h" || m.Values[0].Str() != string([]byte{byte(id)}) {
				t.Errorf("row %d/%d: headers %+v", p, i, m)
			}
			if v[8].IsNull() || v[8].Int() < 0 {
				t.Errorf("row %d/%d: leader-epoch %v", p, i, v[8])
			}
		}
	}
}

func TestMetadataTypeMismatch(t *testing.T) {
	bs := kafkatest.Start(t, 1, "t")
	tbl := table("t", bidSchema(), bs, "t", nil)
	tbl.Metadata = []connector.MetadataColumn{{Name: "off", Key: "offset", Type: types.String}}
	_, err := registry().Source(tbl, env(t))
	if err == nil || !strings.Contains(err.Error(), "column 'off': METADATA 'offset' is BIGINT NOT NULL and cannot be read as") {
		t.Fatalf("err = %v", err)
	}
	tbl.Metadata = []connector.MetadataColumn{{Name: "x", Key: "key", Type: types.Bytes}}
	if _, err := registry().Source(tbl, env(t)); err == nil || !strings.Contains(err.Error(), "does not provide metadata 'key'") {
		t.Fatalf("err = %v", err)
	}
}

// produceNumbered writes n records {"id":i} to partition 0 of topic, record
// i with timestamp base+i seconds.
func produceNumbered(t *testing.T, bs, topic string, base time.Time, from, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	kafkatest.ProduceTo(t, bs, topic, recs...)
}

func ids(rows []types.Row) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d@%d", r.Vals[0].Int(), r.Origin.Offset)
	}
	return b.String()
}

func TestStartupAndBoundedModes(t *testing.T) {
	bs := kafkatest.Start(t, 1, "n")
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	produceNumbered(t, bs, "n", base, 0, 5)
	kafkatest.CommitOffsets(t, bs, "g", "n", map[int32]int64{0: 3})
	ms := func(i int) string { return fmt.Sprint(base.Add(time.Duration(i) * time.Second).UnixMilli()) }

	for _, tc := range []struct {
		name string
		opts connector.Options
		want string
	}{
		{"earliest", connector.Options{"scan.startup.mode": "earliest-offset"}, "0@0,1@1,2@2,3@3,4@4"},
		{"default without group", nil, "0@0,1@1,2@2,3@3,4@4"},
		{"timestamp", connector.Options{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": ms(2)}, "2@2,3@3,4@4"},
		{"specific", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1"}, "1@1,2@2,3@3,4@4"},
		{"group", connector.Options{"scan.startup.mode": "group-offsets", "properties.group.id": "g"}, "3@3,4@4"},
		{"default with group", connector.Options{"properties.group.id": "g"}, "3@3,4@4"},
		{"group without commit", connector.Options{"properties.group.id": "other"}, "0@0,1@1,2@2,3@3,4@4"},
		{"group without commit, latest", connector.Options{"properties.group.id": "other", "properties.auto.offset.reset": "latest"}, ""},
		{"latest", connector.Options{"scan.startup.mode": "latest-offset"}, ""},
		{"bounded specific", connector.Options{"scan.bounded.mode": "specific-offsets", "scan.bounded.specific-offsets": "partition:0,offset:2"}, "0@0,1@1"},
		{"bounded timestamp", connector.Options{"scan.bounded.mode": "timestamp", "scan.bounded.timestamp-millis": ms(3)}, "0@0,1@1,2@2"},
		{"bounded group", connector.Options{"scan.bounded.mode": "group-offsets", "properties.group.id": "g", "scan.startup.mode": "earliest-offset"}, "0@0,1@1,2@2"},
		{"start after end", connector.Options{"scan.bounded.mode": "group-offsets", "properties.group.id": "g", "scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:4"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := connector.Options{"scan.bounded.mode": "latest-offset"}
			for k, v := range tc.opts {
				opts[k] = v
			}
			s := newSource(t, table("n", bidSchema(), bs, "n", opts))
			if got := ids(readAll(t, s)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	// group-offsets with no committed offset and auto.offset.reset none.
	s := newSource(t, table("n", bidSchema(), bs, "n", connector.Options{"properties.group.id": "other", "properties.auto.offset.reset": "none"}))
	if _, err := s.Open(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "topic n partition 0: group 'other' has no committed offset") {
		t.Fatalf("err = %v", err)
	}
}

// TestUnboundedLatest reads an unbounded source that starts at the latest
// offset: Read returns empty batches while there is no data, then the
// records produced after Open.
func TestUnboundedLatest(t *testing.T) {
	bs := kafkatest.Start(t, 1, "n")
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	produceNumbered(t, bs, "n", base, 0, 3)
	s := newSource(t, table("n", bidSchema(), bs, "n", connector.Options{"scan.startup.mode": "latest-offset"}))
	if s.Bounded() {
		t.Fatal("bounded")
	}
	ctx := context.Background()
	r, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := types.NewBatch(4, 1)
	if err := r.Read(ctx, b, 4); err != nil || len(b.Rows) != 0 {
		t.Fatalf("rows = %d, err = %v", len(b.Rows), err)
	}
	produceNumbered(t, bs, "n", base, 3, 2)
	if got := ids(readN(t, r, 2)); got != "3@3,4@4" {
		t.Fatalf("got %s", got)
	}
}

func TestTopicListAndPattern(t *testing.T) {
	bs := kafkatest.Start(t, 2, "a.x", "b.x", "c.y")
	for _, topic := range []string{"a.x", "b.x", "c.y"} {
		kafkatest.ProduceTo(t, bs, topic, &kgo.Record{Partition: 1, Value: []byte(`{"item":"` + topic + `"}`)})
	}
	bounded := connector.Options{"scan.bounded.mode": "latest-offset"}
	s := newSource(t, table("t", bidSchema(), bs, "c.y;a.x", bounded))
	if got := strings.Join(s.(*Source).TopicPartitions(), " "); got != "c.y/0 c.y/1 a.x/0 a.x/1" {
		t.Fatalf("topics = %s", got)
	}
	rows := readAll(t, s)
	if len(rows) != 2 || rows[0].Vals[1].Str() != "c.y" || rows[0].Origin.Part != 1 || rows[1].Vals[1].Str() != "a.x" || rows[1].Origin.Part != 3 {
		t.Fatalf("rows = %+v", rows)
	}
	tbl := table("t", bidSchema(), bs, "", bounded)
	delete(tbl.Options, "topic")
	tbl.Options["topic-pattern"] = `.*\.x`
	s = newSource(t, tbl)
	if got := strings.Join(s.(*Source).TopicPartitions(), " "); got != "a.x/0 a.x/1 b.x/0 b.x/1" {
		t.Fatalf("topics = %s", got)
	}
}

func TestMalformedRecords(t *testing.T) {
	bs := kafkatest.Start(t, 1, "bids")
	kafkatest.Produce(t, bs, "bids", record("", `{"id":1,"item":"a"}`), record("", `{"id":x}`), record("", `{"id":3,"item":"c"}`))
	bounded := connector.Options{"scan.bounded.mode": "latest-offset"}

	// FAIL: the error names the table, topic, partition and offset.
	s := newSource(t, table("bids", bidSchema(), bs, "bids", bounded))
	rows, r, err := readToEnd(t, s, 0)
	r.Close()
	if err == nil || !strings.HasPrefix(err.Error(), "source bids: topic bids partition 0 offset 1: cannot decode record: ") {
		t.Fatalf("err = %v", err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows before the error = %d", len(rows))
	}

	// Skip and count.
	opts := connector.Options{"scan.bounded.mode": "latest-offset", "json.ignore-parse-errors": "true"}
	s = newSource(t, table("bids", bidSchema(), bs, "bids", opts))
	rows, r, err = readToEnd(t, s, 0)
	r.Close()
	if err != nil || ids(rows) != "1@0,3@2" {
		t.Fatalf("rows = %s, err = %v", ids(rows), err)
	}
	if r.(connector.Stats).Skipped() != 1 || s.(connector.Stats).Skipped() != 1 {
		t.Fatalf("skipped = %d, %d", r.(connector.Stats).Skipped(), s.(connector.Stats).Skipped())
	}

	// value.format takes its options under 'value.json.'; a dead-letter
	// file receives the record untouched.
	dl := filepath.Join(t.TempDir(), "dead.txt")
	opts = connector.Options{"scan.bounded.mode": "latest-offset", "value.format": "json", "value.json.fail-on-missing-field": "false", "dead-letter.path": dl}
	s = newSource(t, table("bids", bidSchema(), bs, "bids", opts))
	rows, r, err = readToEnd(t, s, 0)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dl); string(got) != `{"id":x}`+"\n" {
		t.Fatalf("dead-letter file: %q", got)
	}
}

func TestKeyFieldsExceptKey(t *testing.T) {
	bs := kafkatest.Start(t, 1, "users", "out")
	schema := types.NewSchema(
		types.Column{Name: "k_id", Type: types.Int},
		types.Column{Name: "name", Type: types.String},
		types.Column{Name: "k_region", Type: types.String},
	)
	opts := connector.Options{
		"key.format":           "json",
		"key.fields":           "k_region;k_id",
		"key.fields-prefix":    "k_",
		"value.format":         "json",
		"value.fields-include": "EXCEPT_KEY",
		"scan.bounded.mode":    "latest-offset",
	}
	kafkatest.Produce(t, bs, "users",
		record(`{"region":"eu","id":7}`, `{"name":"ann"}`),
		record("", `{"name":"keyless"}`),
		record(`{"region":"us","id":8}`, `{"name":"bob","id":99}`))
	rows := readAll(t, newSource(t, table("users", schema, bs, "users", opts)))
	got := fmt.Sprint(rowStrings(rows))
	if want := "[+I[7, ann, eu] +I[NULL, keyless, NULL] +I[8, bob, us]]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}

	// The sink writes the same split.
	sink := newSink(t, table("out", schema, bs, "out", opts))
	b := types.NewBatch(4, 3)
	for _, row := range rows {
		b.Append(row)
	}
	ctx := context.Background()
	if err := sink.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	var kv []string
	for _, r := range kafkatest.ReadAll(t, bs, "out") {
		kv = append(kv, string(r.Key)+" "+string(r.Value))
	}
	want := `[{"region":"eu","id":7} {"name":"ann"} {"region":null,"id":null} {"name":"keyless"} {"region":"us","id":8} {"name":"bob"}]`
	if fmt.Sprint(kv) != want {
		t.Fatalf("records %s\nwant %s", kv, want)
	}
}

// rowStrings prints rows as +I[a, b, ...].
func rowStrings(rows []types.Row) []string {
	var out []string
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(r.Kind.String() + "[")
		for i, v := range r.Vals {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.IsNull() {
				b.WriteString("NULL")
			} else if v.Kind().IsString() {
				b.WriteString(v.Str())
			} else {
				fmt.Fprint(&b, v.Int())
			}
		}
		b.WriteString("]")
		out = append(out, b.String())
	}
	return out
}

func TestOptionErrors(t *testing.T) {
	bs := kafkatest.Start(t, 1, "t")
	pk := func(tbl connector.Table) connector.Table { tbl.PrimaryKey = []string{"id"}; return tbl }
	for _, tc := range []struct {
		tbl  connector.Table
		want string
	}{
		{table("t", bidSchema(), bs, "t", connector.Options{"topc": "x"}), `unsupported option 'topc' (did you mean "topic"?)`},
		{table("t", bidSchema(), bs, "missing", nil), "cannot read metadata of topic 'missing': it does not exist"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "earliest"}), "option 'scan.startup.mode': unsupported value 'earliest'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "group-offsets"}), "requires option 'properties.group.id'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0"}), "needs both a partition and an offset"},
		// Kafka reads a negative timestamp as "latest" (-1) or "earliest"
		// (-2): a mistake, not a position; and past year 9999 it is no
		// timestamp at all (microseconds, say).
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "-1"}),
			"option 'scan.startup.timestamp-millis': -1 is not a time: expected milliseconds since 1970-01-01 00:00:00 UTC, from 0 to 253402300799999 (9999-12-31 23:59:59.999)"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "1714521600000000"}),
			"option 'scan.startup.timestamp-millis': 1714521600000000 is not a time"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "yesterday"}),
			"option 'scan.startup.timestamp-millis': cannot parse \"yesterday\" as an integer"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.bounded.mode": "timestamp", "scan.bounded.timestamp-millis": "-2"}),
			"option 'scan.bounded.timestamp-millis': -2 is not a time"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1;partition:0,offset:2"}),
			"option 'scan.startup.specific-offsets' lists partition 0 twice"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1,offset:2"}),
			"option 'scan.startup.specific-offsets': \"partition:0,offset:1,offset:2\" gives 'offset' twice"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:-3"}),
			"option 'scan.startup.specific-offsets': cannot parse \"partition:0,offset:-3\""},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:3,offset:1"}),
			"option 'scan.startup.specific-offsets': topic 't' has no partition 3 (it has 1)"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.bounded.mode": "specific-offsets", "scan.bounded.specific-offsets": "partition:1,offset:1"}),
			"option 'scan.bounded.specific-offsets': topic 't' has no partition 1 (it has 1)"},
		{table("t", bidSchema(), bs, "t", connector.Options{"scan.startup.mode": "specific-offset"}),
			"option 'scan.startup.mode': unsupported value 'specific-offset' (expected earliest-offset, latest-offset, group-offsets, timestamp or specific-offsets)"},
		{table("t", bidSchema(), bs, "t", connector.Options{"key.fields": "id"}), "option 'key.fields' requires option 'key.format'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"key.format": "json", "key.fields": "nope"}), "key column 'nope' is not a physical column"},
		{table("t", bidSchema(), bs, "t", connector.Options{"key.format": "json", "key.fields": "id", "key.fields-prefix": "k"}), "requires 'value.fields-include' = 'EXCEPT_KEY'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"value.format": "json", "format": "json"}), "options 'format' and 'value.format' cannot both be set"},
		{table("t", bidSchema(), bs, "t", connector.Options{"properties.isolation.level": "dirty"}), "option 'properties.isolation.level': unsupported value 'dirty'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"json.nope": "x"}), "unsupported option 'json.nope'"},
		{pk(table("t", bidSchema(), bs, "t", connector.Options{"connector": "upsert-kafka", "value.format": "json", "key.format": "json", "scan.startup.mode": "latest-offset"})), "unsupported option 'scan.startup.mode'"},
		{table("t", bidSchema(), bs, "t", connector.Options{"connector": "upsert-kafka", "value.format": "json", "key.format": "json"}), "requires a PRIMARY KEY"},
	} {
		if tc.tbl.Options["connector"] == "upsert-kafka" {
			delete(tc.tbl.Options, "format")
		}
		_, err := registry().Source(tc.tbl, env(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v\nwant %s", tc.tbl.Options, err, tc.want)
		}
	}
	// Unknown client properties are passed over, as Flink does.
	tbl := table("t", bidSchema(), bs, "t", connector.Options{"properties.max.poll.records": "5", "properties.client.id": "me"})
	if _, err := registry().Source(tbl, env(t)); err != nil {
		t.Fatal(err)
	}
}
