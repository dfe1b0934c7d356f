package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func kvSchema() types.Schema {
	return types.NewSchema(
		types.Column{Name: "k", Type: types.String},
		types.Column{Name: "v", Type: types.BigInt},
	)
}

// kv prints a row as print does, with its origin: +I[a, 1]@3.
func kv(r types.Row) string {
	v := "null"
	if !r.Vals[1].IsNull() {
		v = string(types.AppendValue(nil, r.Vals[1], types.BigInt))
	}
	return r.Kind.String() + "[" + r.Vals[0].Str() + ", " + v + "]"
}

// changes is a debezium-json file: a snapshot row, an insert, an update,
// a delete, and on line 5 a record that is not JSON.
const changes = `{"before":null,"after":{"k":"a","v":1},"op":"r"}
{"before":null,"after":{"k":"b","v":2},"op":"c","source":{"table":"t"}}
{"before":{"k":"a","v":1},"after":{"k":"a","v":10},"op":"u"}

{"before":{"k":"b","v":2},"after":null,"op":"d"
{"before":{"k":"b","v":2},"after":null,"op":"d"}`

func TestChangelogSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "changes.jsonl")
	write(t, path, changes)
	f := New()
	tbl := connector.Table{Name: "cdc", Schema: kvSchema(), Options: connector.Options{"connector": "filesystem", "path": path, "format": "debezium-json"}}
	if !f.ProducesChangelog(tbl, env(t)) || !f.AcceptsChangelog(tbl, env(t)) {
		t.Fatal("a debezium-json table must read and write a changelog")
	}
	tbl.Options["format"] = "json"
	if f.ProducesChangelog(tbl, env(t)) || f.AcceptsChangelog(tbl, env(t)) {
		t.Fatal("a json table is append-only")
	}

	// FAIL: the error names the file, the line and the reason; the rows
	// before it were read, in order, the update as two rows whose origins
	// tell them apart.
	s := source(t, "cdc", kvSchema(), connector.Options{"path": path, "format": "debezium-json"})
	rows, r, err := readPartition(t, s, 0)
	r.Close()
	want := "source cdc: " + path + ":5: cannot decode record: invalid JSON: unexpected end of record, expected ',' or '}'"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var got []string
	for _, row := range rows {
		got = append(got, kv(row))
	}
	if strings.Join(got, " ") != "+I[a, 1] +I[b, 2] -U[a, 1] +U[a, 10]" {
		t.Fatalf("rows = %v", got)
	}
	offsets := []int64{
		connector.ChangelogOffset(1, 0, 1), connector.ChangelogOffset(2, 0, 1),
		connector.ChangelogOffset(3, 0, 2), connector.ChangelogOffset(3, 1, 2),
	}
	for i, row := range rows {
		if row.Origin != (types.Origin{Part: 0, Offset: offsets[i]}) {
			t.Errorf("row %d: origin %+v, want offset %d", i, row.Origin, offsets[i])
		}
		if i > 0 && row.Origin.Offset <= rows[i-1].Origin.Offset {
			t.Errorf("row %d: origin offset %d not above the previous row's", i, row.Origin.Offset)
		}
		if rec := connector.ChangelogRecord(row.Origin.Offset); rec != []int64{1, 2, 3, 3}[i] {
			t.Errorf("row %d: record %d", i, rec)
		}
	}
	// A position after the update's first row resumes at its record; after
	// its last row, at the next.
	if connector.ChangelogResume(offsets[2]) != 3 || connector.ChangelogResume(offsets[3]) != 4 {
		t.Errorf("resume: %d, %d", connector.ChangelogResume(offsets[2]), connector.ChangelogResume(offsets[3]))
	}

	// Skip and count.
	s = source(t, "cdc", kvSchema(), connector.Options{"path": path, "format": "debezium-json", "debezium-json.ignore-parse-errors": "true"})
	rows, r, err = readPartition(t, s, 0)
	r.Close()
	if err != nil || len(rows) != 5 || kv(rows[4]) != "-D[b, 2]" {
		t.Fatalf("rows = %v, err = %v", rows, err)
	}
	if n := s.(connector.Stats).Skipped(); n != 1 {
		t.Fatalf("skipped = %d", n)
	}

	// Dead letter: the record, untouched.
	dl := filepath.Join(dir, "dead.txt")
	s = source(t, "cdc", kvSchema(), connector.Options{"path": path, "format": "debezium-json", "dead-letter.path": dl})
	rows, r, err = readPartition(t, s, 0)
	if err != nil || len(rows) != 5 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dl); string(b) != `{"before":{"k":"b","v":2},"after":null,"op":"d"`+"\n" {
		t.Fatalf("dead-letter file:\n%s", b)
	}
}

// TestChangelogMultiRow reads canal records of several rows, straddling
// the reader's batch limit (2 rows here).
func TestChangelogMultiRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "canal.jsonl")
	write(t, path, `{"data":[{"k":"a","v":"1"},{"k":"b","v":"2"},{"k":"c","v":"3"}],"type":"INSERT"}
{"data":[{"k":"a","v":"5"},{"k":"b","v":"6"}],"old":[{"v":"1"},{"v":"2"}],"type":"UPDATE"}
{"data":null,"type":"CREATE","isDdl":true}
{"data":[{"k":"c","v":"3"}],"type":"DELETE"}
`)
	s := source(t, "c", kvSchema(), connector.Options{"path": path, "format": "canal-json"})
	rows, r, err := readPartition(t, s, 0)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows {
		got = append(got, kv(row))
	}
	if strings.Join(got, " ") != "+I[a, 1] +I[b, 2] +I[c, 3] -U[a, 1] +U[a, 5] -U[b, 2] +U[b, 6] -D[c, 3]" {
		t.Fatalf("rows = %v", got)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Origin.Offset <= rows[i-1].Origin.Offset {
			t.Errorf("row %d: origin offset %d not above the previous row's", i, rows[i].Origin.Offset)
		}
	}
}

func TestChangelogSink(t *testing.T) {
	ctx := context.Background()
	batch := func() *types.Batch {
		b := types.NewBatch(4, 2)
		for _, r := range []struct {
			kind types.RowKind
			k    string
			v    int64
		}{{types.Insert, "a", 1}, {types.UpdateBefore, "a", 1}, {types.UpdateAfter, "a", 3}, {types.Delete, "a", 3}} {
			vals := b.AddRow(r.kind, types.NoOrigin, 2)
			vals[0], vals[1] = types.StringValue(r.k), types.IntValue(types.KindBigInt, r.v)
		}
		return b
	}
	cases := []struct {
		format string
		pk     []string
		want   string
	}{
		{"debezium-json", nil, `{"before":null,"after":{"k":"a","v":1},"op":"c"}
{"before":{"k":"a","v":1},"after":null,"op":"d"}
{"before":null,"after":{"k":"a","v":3},"op":"c"}
{"before":{"k":"a","v":3},"after":null,"op":"d"}
`},
		// With a PRIMARY KEY too, the -U is written, as Flink writes it:
		// a reader without the key retracts the replaced row.
		{"debezium-json", []string{"k"}, `{"before":null,"after":{"k":"a","v":1},"op":"c"}
{"before":{"k":"a","v":1},"after":null,"op":"d"}
{"before":null,"after":{"k":"a","v":3},"op":"c"}
{"before":{"k":"a","v":3},"after":null,"op":"d"}
`},
		{"canal-json", []string{"k"}, `{"data":[{"k":"a","v":1}],"type":"INSERT"}
{"data":[{"k":"a","v":1}],"type":"DELETE"}
{"data":[{"k":"a","v":3}],"type":"INSERT"}
{"data":[{"k":"a","v":3}],"type":"DELETE"}
`},
		{"maxwell-json", nil, `{"data":{"k":"a","v":1},"type":"insert"}
{"data":{"k":"a","v":1},"type":"delete"}
{"data":{"k":"a","v":3},"type":"insert"}
{"data":{"k":"a","v":3},"type":"delete"}
`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "out.jsonl")
		tbl := connector.Table{Name: "out", Schema: kvSchema(), PrimaryKey: c.pk,
			Options: connector.Options{"connector": "filesystem", "path": path, "format": c.format}}
		s, err := New().CreateSink(tbl, env(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, batch()); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != c.want {
			t.Errorf("%s %v:\n got %s\nwant %s", c.format, c.pk, b, c.want)
		}
		// What was written reads back: inserts and deletes.
		back := source(t, "back", kvSchema(), connector.Options{"path": path, "format": c.format})
		rows, r, err := readPartition(t, back, 0)
		r.Close()
		if err != nil || len(rows) != strings.Count(c.want, "\n") {
			t.Fatalf("%s: read back %d rows, err = %v", c.format, len(rows), err)
		}
		if kv(rows[0]) != "+I[a, 1]" || kv(rows[len(rows)-1]) != "-D[a, 3]" {
			t.Errorf("%s: read back %v", c.format, rows)
		}
	}
}
