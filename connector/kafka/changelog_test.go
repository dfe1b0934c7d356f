package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/types"
)

func kvSchema() types.Schema {
	return types.NewSchema(
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "item", Type: types.String},
	)
}

func TestChangelogSource(t *testing.T) {
	bs := kafkatest.Start(t, 1, "cdc")
	kafkatest.Produce(t, bs, "cdc",
		record("", `{"before":null,"after":{"id":1,"item":"a"},"op":"c"}`),                // 0
		record("", `{"before":{"id":1,"item":"a"},"after":{"id":1,"item":"b"},"op":"u"}`), // 1
		record("", `{"before":{"id":1,"item":"b"},"after":null,"op":"x"}`),                // 2: bad op
		record("k", ""), // 3: a tombstone
		record("", `{"before":{"id":1,"item":"b"},"after":null,"op":"d"}`)) // 4
	kafkatest.ProduceTo(t, bs, "cdc", &kgo.Record{Key: []byte("k")}) // a nil value
	opts := connector.Options{"format": "debezium-json", "scan.bounded.mode": "latest-offset"}
	tbl := table("cdc", kvSchema(), bs, "cdc", opts)
	if !New().ProducesChangelog(tbl, env(t)) || !New().AcceptsChangelog(tbl, env(t)) {
		t.Fatal("a debezium-json kafka table must read and write a changelog")
	}

	// FAIL: the error names the record and the field.
	rows, r, err := readToEnd(t, newSource(t, tbl), 0)
	r.Close()
	want := `source cdc: topic cdc partition 0 offset 2: cannot decode record: field "op": unknown value "x", expected "c", "r", "u" or "d"`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if got := fmt.Sprint(rowStrings(rows)); got != "[+I[1, a] -U[1, a] +U[1, b]]" {
		t.Fatalf("rows before the error: %s", got)
	}

	// Skip: the bad record is skipped; an empty or nil value (a
	// tombstone) means no change, as in Flink.
	opts["debezium-json.ignore-parse-errors"] = "true"
	src := newSource(t, table("cdc", kvSchema(), bs, "cdc", opts))
	rows, r, err = readToEnd(t, src, 0)
	r.Close()
	if got := fmt.Sprint(rowStrings(rows)); err != nil || got != "[+I[1, a] -U[1, a] +U[1, b] -D[1, b]]" {
		t.Fatalf("rows = %s, err = %v", got, err)
	}
	wantOff := []int64{connector.ChangelogOffset(0, 0, 1), connector.ChangelogOffset(1, 0, 2),
		connector.ChangelogOffset(1, 1, 2), connector.ChangelogOffset(4, 0, 1)}
	for i, row := range rows {
		if row.Origin != (types.Origin{Part: 0, Offset: wantOff[i]}) {
			t.Errorf("row %d: origin %+v, want offset %d", i, row.Origin, wantOff[i])
		}
	}
	if n := src.(connector.Stats).Skipped(); n != 1 {
		t.Errorf("skipped = %d, want 1", n)
	}

	// Resuming after the update's first row reads its record again and
	// skips that row; the group offset to commit is the record's.
	ks := src.(*Source)
	if got := ks.ResumeOffset(wantOff[1]); got != 1 {
		t.Errorf("ResumeOffset(-U) = %d, want 1", got)
	}
	if got := ks.ResumeOffset(wantOff[2]); got != 2 {
		t.Errorf("ResumeOffset(+U) = %d, want 2", got)
	}
	ctx := context.Background()
	rr, err := ks.OpenAfter(ctx, 0, wantOff[1])
	if err != nil {
		t.Fatal(err)
	}
	rows = readN(t, rr, 2)
	rr.Close()
	if got := fmt.Sprint(rowStrings(rows)); got != "[+U[1, b] -D[1, b]]" {
		t.Fatalf("resumed rows = %s", got)
	}
}

// TestChangelogKeyFields reads a debezium value whose key columns are in
// the record key.
func TestChangelogKeyFields(t *testing.T) {
	bs := kafkatest.Start(t, 1, "cdc")
	kafkatest.Produce(t, bs, "cdc",
		record(`{"id":7}`, `{"before":{"item":"a"},"after":{"item":"b"},"op":"u"}`),
		record(`{"id":8}`, `{"before":null,"after":{"item":"c"},"op":"c"}`))
	opts := connector.Options{
		"key.format": "json", "key.fields": "id", "value.format": "debezium-json",
		"value.fields-include": "EXCEPT_KEY", "scan.bounded.mode": "latest-offset",
	}
	rows := readAll(t, newSource(t, table("cdc", kvSchema(), bs, "cdc", opts)))
	if got := fmt.Sprint(rowStrings(rows)); got != "[-U[7, a] +U[7, b] +I[8, c]]" {
		t.Fatalf("rows = %s", got)
	}
}

func TestChangelogSink(t *testing.T) {
	bs := kafkatest.Start(t, 1, "plain", "keyed")
	ctx := context.Background()
	for _, c := range []struct {
		topic string
		pk    []string
		want  string
	}{
		{"plain", nil, `{"before":null,"after":{"id":1,"item":"a"},"op":"c"}
{"before":{"id":1,"item":"a"},"after":null,"op":"d"}
{"before":null,"after":{"id":1,"item":"b"},"op":"c"}
{"before":{"id":1,"item":"b"},"after":null,"op":"d"}`},
		// With a PRIMARY KEY too, every kind is written, as Flink does.
		{"keyed", []string{"id"}, `{"before":null,"after":{"id":1,"item":"a"},"op":"c"}
{"before":{"id":1,"item":"a"},"after":null,"op":"d"}
{"before":null,"after":{"id":1,"item":"b"},"op":"c"}
{"before":{"id":1,"item":"b"},"after":null,"op":"d"}`},
	} {
		tbl := table("out", kvSchema(), bs, c.topic, connector.Options{"format": "debezium-json"})
		tbl.PrimaryKey = c.pk
		s := newSink(t, tbl)
		b := types.NewBatch(4, 2)
		for _, r := range []struct {
			kind types.RowKind
			item string
		}{{types.Insert, "a"}, {types.UpdateBefore, "a"}, {types.UpdateAfter, "b"}, {types.Delete, "b"}} {
			vals := b.AddRow(r.kind, types.NoOrigin, 2)
			vals[0], vals[1] = types.IntValue(types.KindInt, 1), types.StringValue(r.item)
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range kafkatest.ReadAll(t, bs, c.topic) {
			got = append(got, string(r.Value))
		}
		if strings.Join(got, "\n") != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.topic, strings.Join(got, "\n"), c.want)
		}
	}
}

func TestChangelogFormatErrors(t *testing.T) {
	bs := kafkatest.Start(t, 1, "t")
	tbl := table("u", kvSchema(), bs, "t", connector.Options{"connector": "upsert-kafka", "key.format": "json", "value.format": "canal-json"})
	tbl.PrimaryKey = []string{"id"}
	if _, err := registry().Source(tbl, env(t)); err == nil || !strings.Contains(err.Error(), "value format 'canal-json' is a changelog format") {
		t.Errorf("upsert-kafka with canal-json: %v", err)
	}
	tbl = table("k", kvSchema(), bs, "t", connector.Options{"key.format": "maxwell-json", "key.fields": "id"})
	if _, err := registry().Source(tbl, env(t)); err == nil || !strings.Contains(err.Error(), "key format 'maxwell-json' is a changelog format") {
		t.Errorf("changelog key format: %v", err)
	}
}
