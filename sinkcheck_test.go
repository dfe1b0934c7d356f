package sluice_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluicesql/sluice"
)

// TestInvalidUTF8ToTextSinks: a STRING read by the raw format keeps the
// bytes it was given, valid UTF-8 or not, as Flink's StringData does. The
// text formats write it as Flink's do: Flink turns the string into a Java
// String first, whose UTF-8 decoder replaces each malformed byte with
// U+FFFD, so the json, csv and changelog sinks write U+FFFD in its place
// and their output stays valid UTF-8 (and valid JSON). The raw sink
// writes the bytes back unchanged, as Flink's raw format does.
func TestInvalidUTF8ToTextSinks(t *testing.T) {
	dir := t.TempDir()
	// A stray continuation byte, a truncated sequence before a quote, an
	// encoded surrogate and a byte that is never UTF-8.
	in := "ok\x80 end\nquote\xc3\"\nsur\xed\xa0\x80rogate\nff\xff\n"
	writeFile(t, dir, "in.txt", in)
	_, err := runSQL(t, nil, dir, `
CREATE TABLE src (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.txt', 'format' = 'raw');
CREATE TABLE j (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
CREATE TABLE d (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.debezium', 'format' = 'debezium-json');
CREATE TABLE c (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.csv', 'format' = 'csv');
CREATE TABLE r (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.raw', 'format' = 'raw');
INSERT INTO j SELECT s FROM src;
INSERT INTO d SELECT s FROM src;
INSERT INTO c SELECT s FROM src;
INSERT INTO r SELECT s FROM src;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ok\uFFFD end", "quote\uFFFD\"", "sur\uFFFD\uFFFD\uFFFDrogate", "ff\uFFFD"}
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) && name != "out.raw" {
			t.Errorf("%s is not valid UTF-8: %q", name, b)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	var got []string
	for _, line := range read("out.jsonl") {
		var row struct{ S string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("out.jsonl: %v: %q", err, line)
		}
		got = append(got, row.S)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("json: got %q, want %q", got, want)
	}
	got = got[:0]
	for _, line := range read("out.debezium") {
		var rec struct{ After struct{ S string } }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("out.debezium: %v: %q", err, line)
		}
		got = append(got, rec.After.S)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("debezium-json: got %q, want %q", got, want)
	}
	csvWant := []string{"ok\uFFFD end", `"quote` + "\uFFFD" + `"""`, "sur\uFFFD\uFFFD\uFFFDrogate", "ff\uFFFD"}
	if got := read("out.csv"); strings.Join(got, "|") != strings.Join(csvWant, "|") {
		t.Errorf("csv: got %q, want %q", got, csvWant)
	}
	if got := strings.Join(read("out.raw"), "\n") + "\n"; got != in {
		t.Errorf("raw: got %q, want the input bytes %q", got, in)
	}
}

// TestSinkNotNullEnforcer: a NULL written into a NOT NULL column of a
// sink fails the job with Flink's message, naming the column; with
// 'table.exec.sink.not-null-enforcer' = 'DROP' the row is dropped and
// counted, as Flink's ConstraintEnforcer does (its default is ERROR).
func TestSinkNotNullEnforcer(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", `{"id":1,"name":"a"}
{"id":2}
{"id":3,"name":"c"}
{"name":"d"}
`)
	ddl := `
CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE dst (id INT NOT NULL, name STRING NOT NULL, tag STRING)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
`
	insert := "INSERT INTO dst SELECT id, name, 'x' FROM src;"
	_, err := runSQL(t, nil, dir, ddl+insert)
	const msg = "Column 'name' is NOT NULL, however, a null value is being written into it. You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently."
	if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "'dst'") {
		t.Fatalf("got error %v, want one naming table 'dst' and saying %q", err, msg)
	}

	var log strings.Builder
	e, err := sluice.Open(sluice.Options{Stdout: &log, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := strings.ReplaceAll("SET 'table.exec.sink.not-null-enforcer' = 'drop';"+ddl+insert, "$DIR", dir)
	if err := e.Run(context.Background(), "test.sql", []byte(src)); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"id\":1,\"name\":\"a\",\"tag\":\"x\"}\n{\"id\":3,\"name\":\"c\",\"tag\":\"x\"}\n"; string(out) != want {
		t.Errorf("DROP wrote %q, want %q", out, want)
	}
	if !strings.Contains(log.String(), "2 rows dropped for a NULL in a NOT NULL column") {
		t.Errorf("the job's summary does not count the dropped rows:\n%s", log.String())
	}

	// EXPLAIN shows the check as Flink's plan does.
	plan, err := e.Explain("explain.sql", []byte(insert))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "+- ConstraintEnforcer[NotNullEnforcer(fields=[id, name])]") {
		t.Errorf("EXPLAIN shows no enforcer:\n%s", plan)
	}

	// A value other than ERROR or DROP is refused.
	_, err = runSQL(t, nil, dir, "SET 'table.exec.sink.not-null-enforcer' = 'WARN';"+ddl+insert)
	if err == nil || !strings.Contains(err.Error(), "table.exec.sink.not-null-enforcer") {
		t.Errorf("got %v, want an error about the option's value", err)
	}
}
