package sluice_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// files lists the files below dir (relative, sorted), hidden ones too.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// A PARTITIONED BY filesystem table is written as Flink writes it: a path
// that names a directory (a file: URI here), k=v/ directories whose files
// hold the other columns, NULL as __DEFAULT_PARTITION__, special
// characters escaped; with the success-file policy every partition gets a
// _SUCCESS file at the end; and read back, the partition columns come from
// the directories.
func TestPartitionedFilesystemTable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", `{"id":1,"dt":"2024-01-01","hr":"10","v":"a"}
{"id":2,"dt":"2024-01-01","hr":"11","v":"b"}
{"id":3,"dt":"2024-01-02","hr":"10","v":"c"}
{"id":4,"dt":null,"hr":"a/b:c","v":"d"}
`)
	ddl := `
CREATE TABLE src (id INT, dt STRING, hr STRING, v STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE dst (id INT, v STRING, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem', 'path' = 'file://$DIR/out', 'format' = 'json',
  'sink.partition-commit.policy.kind' = 'success-file');`
	if _, err := runSQL(t, nil, dir, ddl+"INSERT INTO dst SELECT id, v, dt, hr FROM src;"); err != nil {
		t.Fatal(err)
	}
	out, err := runSQL(t, nil, dir, ddl+"SELECT * FROM dst;")
	if err != nil {
		t.Fatal(err)
	}
	got := files(t, filepath.Join(dir, "out"))
	var layout []string
	for _, f := range got {
		d, base := filepath.Split(f)
		if strings.HasPrefix(base, "part-") {
			base = "part"
		}
		layout = append(layout, d+base)
	}
	want := []string{
		"dt=2024-01-01/hr=10/_SUCCESS", "dt=2024-01-01/hr=10/part",
		"dt=2024-01-01/hr=11/_SUCCESS", "dt=2024-01-01/hr=11/part",
		"dt=2024-01-02/hr=10/_SUCCESS", "dt=2024-01-02/hr=10/part",
		"dt=__DEFAULT_PARTITION__/hr=a%2Fb%3Ac/_SUCCESS", "dt=__DEFAULT_PARTITION__/hr=a%2Fb%3Ac/part",
	}
	if strings.Join(layout, "\n") != strings.Join(want, "\n") {
		t.Fatalf("layout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "out", got[1]))
	if string(data) != `{"id":1,"v":"a"}`+"\n" {
		t.Fatalf("%s holds %q: a partition's files hold the other columns", got[1], data)
	}
	if rows := sortedLines(out); strings.Join(rows, "\n") != strings.Join([]string{
		"id, v, dt, hr",
		"+I[1, a, 2024-01-01, 10]", "+I[2, b, 2024-01-01, 11]", "+I[3, c, 2024-01-02, 10]", "+I[4, d, null, a/b:c]",
	}, "\n") {
		t.Fatalf("read back:\n%s", out)
	}
}

// Partition values are read in the column's type; a directory whose value
// is not one is an error naming it.
func TestPartitionValuesTyped(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"day=2024-03-01/n=7", "day=2024-03-02/n=__DEFAULT_PARTITION__"} {
		if err := os.MkdirAll(filepath.Join(dir, "t", p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "t", p), "f.jsonl", `{"v":1}`+"\n")
	}
	out, err := runSQL(t, nil, dir, `
CREATE TABLE t (v INT, day DATE, n INT) PARTITIONED BY (day, n) WITH ('connector' = 'filesystem', 'path' = '$DIR/t', 'format' = 'json');
SELECT v, day + INTERVAL '1' DAY AS next_day, n + 1 AS m FROM t;`)
	if err != nil {
		t.Fatal(err)
	}
	if rows := sortedLines(out); strings.Join(rows[1:], " ") != "+I[1, 2024-03-02, 8] +I[1, 2024-03-03, null]" {
		t.Fatalf("got:\n%s", out)
	}
	if err := os.MkdirAll(filepath.Join(dir, "t", "day=soon", "n=1"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "t", "day=soon", "n=1"), "f.jsonl", `{"v":1}`+"\n")
	_, err = runSQL(t, nil, dir, `
CREATE TABLE t (v INT, day DATE, n INT) PARTITIONED BY (day, n) WITH ('connector' = 'filesystem', 'path' = '$DIR/t', 'format' = 'json');
SELECT * FROM t;`)
	if err == nil || !strings.Contains(err.Error(), `day="soon"`) {
		t.Fatalf("got %v", err)
	}
}

// With the partition-time trigger, a partition is committed once the
// watermark has passed its time (from its values, by the extractor's
// pattern) plus the delay; at the end of the input, every one.
func TestPartitionCommitByPartitionTime(t *testing.T) {
	dir := t.TempDir()
	// Events of 10:xx and 11:xx; the watermark reaches 12:00 after the
	// last 11:59 row of the first file, which ends early.
	writeFile(t, dir, "in.jsonl", `{"ts":"2024-01-01 10:05:00","v":1}
{"ts":"2024-01-01 10:50:00","v":2}
{"ts":"2024-01-01 11:10:00","v":3}
`)
	_, err := runSQL(t, nil, dir, `
CREATE TABLE src (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE dst (v INT, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem', 'path' = '$DIR/out/', 'format' = 'json',
  'sink.partition-commit.trigger' = 'partition-time', 'sink.partition-commit.delay' = '1 h',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00',
  'sink.partition-commit.policy.kind' = 'success-file', 'sink.partition-commit.success-file.name' = '_DONE');
INSERT INTO dst SELECT v, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH') FROM src;`)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(files(t, filepath.Join(dir, "out")), " ")
	for _, want := range []string{"dt=2024-01-01/hr=10/_DONE", "dt=2024-01-01/hr=11/_DONE"} {
		if !strings.Contains(got, want) {
			t.Fatalf("files %s lack %s", got, want)
		}
	}
}

// Options of the filesystem sink that Flink has and Sluice cannot honour
// are refused, saying why.
func TestPartitionCommitOptionErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", `{"v":1}`+"\n")
	for _, c := range []struct{ ddl, want string }{
		{`PARTITIONED BY (p) WITH ('connector' = 'filesystem', 'path' = '$DIR/o', 'format' = 'json', 'sink.partition-commit.policy.kind' = 'metastore')`, "needs a Hive metastore"},
		{`WITH ('connector' = 'filesystem', 'path' = '$DIR/o', 'format' = 'json', 'sink.partition-commit.policy.kind' = 'success-file')`, "needs a PARTITIONED BY table"},
		{`PARTITIONED BY (p) WITH ('connector' = 'filesystem', 'path' = '$DIR/o', 'format' = 'json', 'sink.partition-commit.trigger' = 'soon', 'sink.partition-commit.policy.kind' = 'success-file')`, "unknown trigger 'soon'"},
		{`PARTITIONED BY (p) WITH ('connector' = 'filesystem', 'path' = 'hdfs://nn/o', 'format' = 'json')`, "scheme hdfs is not supported"},
		{`PARTITIONED BY (p) WITH ('connector' = 'print')`, "does not lay data out by partition"},
		{`PARTITIONED BY (q) WITH ('connector' = 'filesystem', 'path' = '$DIR/o', 'format' = 'json')`, "partition column 'q' is not a column of the table"},
	} {
		_, err := runSQL(t, nil, dir, `
CREATE TABLE src (v INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE dst (v INT, p STRING) `+c.ddl+`;
INSERT INTO dst SELECT v, 'x' FROM src;`)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.ddl, err, c.want)
		}
	}
}
