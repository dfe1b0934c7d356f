package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice job preview against a server with auth on: a bounded query's
// rows as a table and as JSON lines, an unbounded one cut at --max-rows
// and at --timeout (which is the preview's own, not the job commands'),
// a SQL error with the file's line and a caret, and a run-time error.
func TestJobPreview(t *testing.T) {
	dir := t.TempDir()
	startJobServer(t, dir)

	write := func(name, sql string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("seq.sql", `CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3');
SELECT id, CASE WHEN id = 2 THEN NULL ELSE 'n' || CAST(id AS STRING) END AS name FROM seq;
`)
	write("gen.sql", `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '%s');
SELECT id FROM gen;
`)
	write("fast.sql", strings.Replace(readFile(t, filepath.Join(dir, "gen.sql")), "%s", "1000", 1))
	write("slow.sql", strings.Replace(readFile(t, filepath.Join(dir, "gen.sql")), "%s", "1", 1))
	write("bad.sql", "CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen');\nSELECT idd FROM seq;\n")
	write("cast.sql", `CREATE TABLE s (x STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.x.length' = '4');
SELECT CAST(x AS INT) AS n FROM s;
`)
	run := func(args ...string) string {
		t.Helper()
		out, stderr, err := runCLI(t, dir, "", append([]string{"job", "preview"}, args...)...)
		if err != nil {
			t.Fatalf("sluice job preview %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}

	want := `+----+----------------------+----------------------+
| op |                   id |                 name |
+----+----------------------+----------------------+
| +I |                    1 |                   n1 |
| +I |                    2 |               <NULL> |
| +I |                    3 |                   n3 |
+----+----------------------+----------------------+
Received a total of 3 rows (stopped at the end of the query's input)
`
	if out := run("seq.sql"); out != want {
		t.Errorf("preview printed\n%s\nwant\n%s", out, want)
	}
	want = `{"columns":[{"name":"id","type":"BIGINT"},{"name":"name","type":"STRING"}]}
{"kind":"+I","values":[1,"n1"]}
{"kind":"+I","values":[2,null]}
{"kind":"+I","values":[3,"n3"]}
{"end":{"rows":3,"reason":"finished"}}
`
	if out := run("seq.sql", "-o", "json"); out != want {
		t.Errorf("preview -o json printed\n%s\nwant\n%s", out, want)
	}

	lines := strings.Split(strings.TrimSpace(run("fast.sql", "--max-rows", "5", "-o", "json")), "\n")
	var end struct {
		End struct {
			Rows   int
			Reason string
		}
	}
	if len(lines) != 7 || json.Unmarshal([]byte(lines[6]), &end) != nil || end.End.Rows != 5 || end.End.Reason != "max_rows" {
		t.Errorf("preview --max-rows 5 printed\n%s", strings.Join(lines, "\n"))
	}
	// At 1 row a second, 10,000 rows take longer than the timeout.
	out := run("slow.sql", "--max-rows", "10000", "--timeout", "300ms")
	if !strings.HasSuffix(out, "rows (stopped at the timeout)\n") {
		t.Errorf("preview --timeout 300ms printed\n%s", out)
	}

	_, stderr, err := runCLI(t, dir, "", "job", "preview", "bad.sql")
	if err == nil || !strings.HasPrefix(stderr, "bad.sql:2:8: column 'idd' not found") || !strings.Contains(stderr, "SELECT idd FROM seq;\n       ^") {
		t.Errorf("a bad SELECT: err %v, stderr\n%s", err, stderr)
	}
	out, stderr, err = runCLI(t, dir, "", "job", "preview", "cast.sql")
	if err == nil || !strings.Contains(stderr, "error: ") || !strings.Contains(stderr, "cannot cast") || !strings.HasPrefix(out, "+----+") {
		t.Errorf("a run-time error: err %v, stdout\n%s\nstderr\n%s", err, out, stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
