package filesystem

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/changelog"
	"github.com/sluicesql/sluice/connector/format/csv"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/format/raw"
	"github.com/sluicesql/sluice/types"
)

func env(t *testing.T) connector.Env {
	t.Helper()
	f := format.NewRegistry()
	for _, x := range append([]format.Factory{json.New(), csv.New(), raw.New()}, changelog.Formats()...) {
		if err := f.Register(x); err != nil {
			t.Fatal(err)
		}
	}
	return connector.Env{Formats: f}
}

func bidSchema() types.Schema {
	return types.NewSchema(
		types.Column{Name: "bidtime", Type: types.Timestamp(3)},
		types.Column{Name: "price", Type: types.Decimal(10, 2)},
		types.Column{Name: "item", Type: types.String},
	)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func source(t *testing.T, name string, schema types.Schema, opts connector.Options) connector.Source {
	t.Helper()
	opts["connector"] = "filesystem"
	reg := connector.NewRegistry()
	reg.Register(New())
	s, err := reg.Source(connector.Table{Name: name, Schema: schema, Options: opts}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readPartition reads partition p to the end, returning its rows and the
// first error other than io.EOF.
func readPartition(t *testing.T, s connector.Source, p int) ([]types.Row, connector.Reader, error) {
	t.Helper()
	ctx := context.Background()
	r, err := s.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for {
		b := types.NewBatch(8, 3)
		err := r.Read(ctx, b, 2)
		for _, row := range b.Rows {
			rows = append(rows, types.CopyRow(row))
		}
		if errors.Is(err, io.EOF) {
			return rows, r, nil
		}
		if err != nil {
			return rows, r, err
		}
	}
}

const bids = `{"bidtime":"2020-04-15 08:05:00.000","price":4.00,"item":"C"}

{"bidtime":"2020-04-15 08:07:00.000","price":2.00,"item":"A"}
{"bidtime":"2020-04-15 08:09:00.000","price":4.x,"item":"D"}
{"bidtime":"2020-04-15 08:11:00.000","price":3.00,"item":"B"}`

func TestDirectoryPartitions(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.jsonl"), `{"item":"b1"}`+"\n"+`{"item":"b2"}`+"\n")
	write(t, filepath.Join(dir, "a.jsonl"), "\r\n"+`{"item":"a1"}`+"\r\n")
	write(t, filepath.Join(dir, ".hidden"), "garbage")
	write(t, filepath.Join(dir, "_SUCCESS"), "garbage")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	s := source(t, "t", bidSchema(), connector.Options{"path": dir, "format": "json"})
	if s.Partitions() != 2 || !s.Bounded() {
		t.Fatalf("partitions = %d, bounded = %v", s.Partitions(), s.Bounded())
	}
	want := [][]struct {
		item string
		off  int64
	}{{{"a1", 2}}, {{"b1", 1}, {"b2", 2}}}
	for p := range 2 {
		rows, r, err := readPartition(t, s, p)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if len(rows) != len(want[p]) {
			t.Fatalf("partition %d: %d rows", p, len(rows))
		}
		for i, w := range want[p] {
			if rows[i].Vals[2].Str() != w.item || rows[i].Origin != (types.Origin{Part: int32(p), Offset: w.off}) || rows[i].Kind != types.Insert {
				t.Errorf("partition %d row %d: %+v", p, i, rows[i])
			}
		}
	}
}

func TestErrorPolicies(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bids.jsonl")
	write(t, path, bids)

	// FAIL (default): the error names the table, the file and line, and why.
	s := source(t, "bids", bidSchema(), connector.Options{"path": path, "format": "json"})
	rows, r, err := readPartition(t, s, 0)
	r.Close()
	want := "source bids: " + path + `:4: cannot decode record: field "price": invalid number "4.x"`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if len(rows) != 2 {
		t.Fatalf("rows before the error = %d", len(rows))
	}

	// Skip and count.
	s = source(t, "bids", bidSchema(), connector.Options{"path": path, "format": "json", "json.ignore-parse-errors": "true"})
	rows, r, err = readPartition(t, s, 0)
	r.Close()
	if err != nil || len(rows) != 3 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	if n := r.(connector.Stats).Skipped(); n != 1 {
		t.Fatalf("reader skipped = %d", n)
	}
	if n := s.(connector.Stats).Skipped(); n != 1 {
		t.Fatalf("source skipped = %d", n)
	}
	if rows[2].Origin.Offset != 5 || rows[2].Vals[2].Str() != "B" {
		t.Fatalf("last row = %+v", rows[2])
	}

	// Dead letter: skipped and appended, untouched, to the file.
	dl := filepath.Join(dir, "dead.txt")
	write(t, dl, "earlier\n")
	s = source(t, "bids", bidSchema(), connector.Options{"path": path, "format": "json", "dead-letter.path": dl})
	rows, r, err = readPartition(t, s, 0)
	if err != nil || len(rows) != 3 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dl)
	if string(got) != "earlier\n"+`{"bidtime":"2020-04-15 08:09:00.000","price":4.x,"item":"D"}`+"\n" {
		t.Fatalf("dead-letter file:\n%s", got)
	}

	// Dead letter with ignore-parse-errors explicitly false: written, then fail.
	s = source(t, "bids", bidSchema(), connector.Options{"path": path, "format": "json", "dead-letter.path": dl, "json.ignore-parse-errors": "false"})
	_, r, err = readPartition(t, s, 0)
	r.Close()
	if err == nil || !strings.Contains(err.Error(), ":4: cannot decode record") {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(dl); strings.Count(string(got), "4.x") != 2 {
		t.Fatalf("dead-letter file:\n%s", got)
	}
}

func TestCSVSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bids.csv")
	write(t, path, "# header comment\n2020-04-15 08:05:00,4.00,\"multi\nline\"\n\n2020-04-15 08:07:00,2.00,A\n")
	s := source(t, "bids", bidSchema(), connector.Options{"path": path, "format": "csv", "csv.allow-comments": "true"})
	rows, r, err := readPartition(t, s, 0)
	r.Close()
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	if rows[0].Vals[2].Str() != "multi\nline" || rows[0].Origin.Offset != 2 || rows[1].Origin.Offset != 5 {
		t.Fatalf("rows = %+v", rows)
	}
}

func TestRawSourceLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*readBufferSize+17)
	path := filepath.Join(t.TempDir(), "log.txt")
	write(t, path, "first\n\n"+long+"\nlast")
	s := source(t, "logs", types.NewSchema(types.Column{Name: "line", Type: types.String}), connector.Options{"path": path, "format": "raw"})
	rows, r, err := readPartition(t, s, 0)
	r.Close()
	if err != nil || len(rows) != 4 {
		t.Fatalf("rows = %d, err = %v", len(rows), err)
	}
	for i, want := range []string{"first", "", long, "last"} {
		if rows[i].Vals[0].Str() != want || rows[i].Origin.Offset != int64(i+1) {
			t.Errorf("row %d: %d bytes at offset %d", i, len(rows[i].Vals[0].Str()), rows[i].Origin.Offset)
		}
	}
}

func sink(t *testing.T, name string, schema types.Schema, opts connector.Options) connector.Sink {
	t.Helper()
	opts["connector"] = "filesystem"
	reg := connector.NewRegistry()
	reg.Register(New())
	s, err := reg.Sink(connector.Table{Name: name, Schema: schema, Options: opts}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSinkRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	write(t, in, bids)
	src := source(t, "bids", bidSchema(), connector.Options{"path": in, "format": "json", "json.ignore-parse-errors": "true"})
	rows, r, err := readPartition(t, src, 0)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	// What the file held is kept: INSERT INTO appends (as Flink's does).
	write(t, out, "2020-04-15 08:01:00,1.00,Z\n")
	s := sink(t, "out", bidSchema(), connector.Options{"path": out, "format": "csv", "sink.rolling-policy.file-size": "128MB"})
	b := types.NewBatch(4, 3)
	for _, row := range rows {
		row.Kind = types.UpdateAfter
		b.Append(row)
	}
	ctx := context.Background()
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := "2020-04-15 08:01:00,1.00,Z\n2020-04-15 08:05:00,4.00,C\n2020-04-15 08:07:00,2.00,A\n2020-04-15 08:11:00,3.00,B\n"
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Fatalf("after Flush:\n%s", got)
	}
	b.Reset()
	b.AddRow(types.UpdateBefore, types.NoOrigin, 3)
	if err := s.Write(ctx, b); err == nil || !strings.Contains(err.Error(), "filesystem sink 'out' cannot take updates/deletes (got a -U row)") {
		t.Fatalf("err = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	back := source(t, "back", bidSchema(), connector.Options{"path": out, "format": "csv"})
	again, r, err := readPartition(t, back, 0)
	r.Close()
	if err != nil || len(again) != 4 {
		t.Fatalf("rows = %d, err = %v", len(again), err)
	}
	again = again[1:]
	for i := range again {
		for j := range again[i].Vals {
			if !types.Equal(again[i].Vals[j], rows[i].Vals[j]) {
				t.Errorf("row %d col %d: %v != %v", i, j, again[i].Vals[j], rows[i].Vals[j])
			}
		}
	}
}

func TestSinkDirectory(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, item := range []string{"x", "y"} {
		s := sink(t, "out", bidSchema(), connector.Options{"path": dir, "format": "json"})
		b := types.NewBatch(1, 3)
		b.AddRow(types.Insert, types.NoOrigin, 3)[2] = types.StringValue(item)
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Each sink wrote a part file of its own.
	files, _ := filepath.Glob(filepath.Join(dir, "part-*-0.json"))
	if len(files) != 2 {
		t.Fatalf("part files: %v", files)
	}
	var items []string
	for _, f := range files {
		got, _ := os.ReadFile(f)
		items = append(items, string(got))
	}
	sort.Strings(items)
	if strings.Join(items, "") != `{"bidtime":null,"price":null,"item":"x"}`+"\n"+`{"bidtime":null,"price":null,"item":"y"}`+"\n" {
		t.Fatalf("part files hold %q", items)
	}
	// The directory reads back as two partitions.
	src := source(t, "back", bidSchema(), connector.Options{"path": dir, "format": "json"})
	if src.Partitions() != 2 {
		t.Fatalf("partitions = %d", src.Partitions())
	}
}

func TestOptionErrors(t *testing.T) {
	reg := connector.NewRegistry()
	reg.Register(New())
	dir := t.TempDir()
	for _, tc := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"format": "json"}, "missing required option 'path'"},
		{connector.Options{"path": dir}, "missing required option 'format'"},
		{connector.Options{"path": dir, "format": "jsn"}, `unknown format 'jsn' (did you mean "json"?)`},
		{connector.Options{"path": dir, "format": "json", "pth": "x"}, `unsupported option 'pth' (did you mean "path"?)`},
		{connector.Options{"path": dir, "format": "json", "json.fail-on-missing": "true"}, `unsupported option 'json.fail-on-missing'`},
		{connector.Options{"path": dir, "format": "json", "csv.field-delimiter": ";"}, `unsupported option 'csv.field-delimiter'`},
		{connector.Options{"path": filepath.Join(dir, "nope"), "format": "json"}, "cannot read path"},
	} {
		tc.opts["connector"] = "filesystem"
		_, err := reg.Source(connector.Table{Name: "t", Schema: bidSchema(), Options: tc.opts}, env(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %s", tc.opts, err, tc.want)
		}
	}
}

func TestSinkRejectsMetadata(t *testing.T) {
	reg := connector.NewRegistry()
	reg.Register(New())
	_, err := reg.Sink(connector.Table{Name: "t", Schema: bidSchema(),
		Metadata: []connector.MetadataColumn{{Name: "ts", Key: "timestamp", Type: types.Timestamp(3)}},
		Options:  connector.Options{"connector": "filesystem", "path": filepath.Join(t.TempDir(), "x"), "format": "json"}}, env(t))
	if err == nil || !strings.Contains(err.Error(), "provides no metadata") {
		t.Fatalf("err = %v", err)
	}
}

// TestBOMAndBlankLines: a UTF-8 byte order mark at the start of a JSON or
// CSV file, and a line of white space only in a JSON file, are read as
// Flink's readers read them (Jackson skips the mark; a blank JSON record
// gives no row) instead of failing the job.
func TestBOMAndBlankLines(t *testing.T) {
	dir := t.TempDir()
	const bom = "\xef\xbb\xbf"
	write(t, filepath.Join(dir, "bids.jsonl"), bom+`{"bidtime":"2020-04-15 08:05:00.000","price":4.00,"item":"C"}`+"\n \t\r\n"+
		`{"bidtime":"2020-04-15 08:07:00.000","price":2.00,"item":"A"}`+"\n   \n")
	write(t, filepath.Join(dir, "bids.csv"), bom+"2020-04-15 08:05:00,4.00,C\r\n2020-04-15 08:07:00,2.00,A\r\n")
	for _, c := range []struct{ file, format string }{{"bids.jsonl", "json"}, {"bids.csv", "csv"}} {
		s := source(t, "bids", bidSchema(), connector.Options{"path": filepath.Join(dir, c.file), "format": c.format})
		rows, r, err := readPartition(t, s, 0)
		r.Close()
		if err != nil || len(rows) != 2 {
			t.Errorf("%s: %d rows, err = %v", c.format, len(rows), err)
			continue
		}
		if got := types.FormatValue(rows[0].Vals[0], types.Timestamp(3)); got != "2020-04-15 08:05:00.000" || rows[1].Vals[2].Str() != "A" {
			t.Errorf("%s: rows %v", c.format, rows)
		}
	}
}
