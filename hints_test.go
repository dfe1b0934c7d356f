package sluice_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// runSQLLog is runSQL that also returns what the engine logged (warnings).
func runSQLLog(t *testing.T, dir, src string) (out, log string, err error) {
	t.Helper()
	var o, l bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &o, Log: &l})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src = strings.ReplaceAll(src, "$DIR", dir)
	err = e.Run(context.Background(), "test.sql", []byte(src))
	return o.String(), l.String(), err
}

const hintTables = `
CREATE TABLE bids (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
CREATE TABLE outt (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
`

func writeHintInputs(t *testing.T, dir string) {
	writeFile(t, dir, "bids.jsonl", `{"item":"own"}`+"\n")
	writeFile(t, dir, "other.jsonl", `{"item":"other"}`+"\n")
}

// Flink applies an OPTIONS hint after a table's name over the table's WITH
// options ('table.dynamic-table-options.enabled' is true by default): the
// hinted 'path' is read, not the declared one.
func TestOptionsHintOnSource(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	out, err := runSQL(t, nil, dir, hintTables+`
SELECT item FROM bids /*+ OPTIONS('path' = '$DIR/other.jsonl') */ AS b;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); strings.Join(got, "|") != "item|+I[other]" {
		t.Errorf("got %q, want the hinted file's row 'other'", got)
	}
	// The same table without the hint still reads its own path, in the
	// same job: the hint belongs to one reference.
	out, err = runSQL(t, nil, dir, hintTables+`
SELECT item FROM bids /*+ OPTIONS('path' = '$DIR/other.jsonl') */ UNION ALL SELECT item FROM bids;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); strings.Join(got, "|") != "item|+I[other]|+I[own]" {
		t.Errorf("got %q, want both files' rows", got)
	}
}

// And on an INSERT's target table: the rows go to the hinted path.
func TestOptionsHintOnInsertTarget(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	if _, err := runSQL(t, nil, dir, hintTables+`
INSERT INTO outt /*+ OPTIONS('path' = '$DIR/hinted.jsonl') */ SELECT item FROM bids;`); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "hinted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != `{"item":"own"}` {
		t.Errorf("hinted path holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.jsonl")); err == nil {
		t.Errorf("the declared path was written too")
	}
}

// Hinted options are checked as WITH options are, an unknown key with the
// nearest one suggested, at the hint's position; hints on views and WITH
// queries are refused, as Flink refuses them.
func TestOptionsHintErrors(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	for _, tc := range []struct{ sql, want string }{
		{`SELECT item FROM bids /*+ OPTIONS('pathh' = 'x') */;`,
			`test.sql:5:35: table bids: filesystem: unsupported option 'pathh'`},
		{`SELECT item FROM bids /*+ OPTION('path' = 'x') */;`,
			`test.sql:5:27: unknown table hint 'OPTION': the table hint is OPTIONS('key' = 'value') (did you mean "OPTIONS"?)`},
		{`CREATE VIEW v AS SELECT * FROM bids;
SELECT item FROM v /*+ OPTIONS('path' = 'x') */;`,
			`test.sql:6:24: view 'v' cannot take OPTIONS hints`},
		{`WITH w AS (SELECT * FROM bids) SELECT item FROM w /*+ OPTIONS('path' = 'x') */;`,
			`test.sql:5:55: WITH query 'w' cannot take OPTIONS hints`},
		{`SET 'table.dynamic-table-options.enabled' = 'false';
SELECT item FROM bids /*+ OPTIONS('path' = 'x') */;`,
			`test.sql:6:27: OPTIONS hints are switched off`},
		{`SELECT /*+ STATE_TTL('bids' = '1d') */ item FROM bids;`,
			`test.sql:5:12: the STATE_TTL hint is not supported`},
		{`SELECT /*+ LOOKUP('table' = 'bids', 'retry-predicate' = 'lookup_miss') */ item FROM bids;`,
			`test.sql:5:37: LOOKUP hint option 'retry-predicate' is not supported`},
		{`SELECT item FROM bids WHERE /*+ OPTIONS('path' = 'x') */ item = 'a';`,
			`test.sql:5:29: expected expression, found a hint '/*+'`},
	} {
		_, err := runSQL(t, nil, dir, hintTables+"\n"+tc.sql)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant prefix %s", tc.sql, err, tc.want)
		}
	}
}

// Hints that change only how a query runs are warned of, at their
// position, and the query runs: join strategy hints, and hints Flink does
// not know (Flink ignores those with a warning).
func TestQueryHintsWarn(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	out, log, err := runSQLLog(t, dir, hintTables+`
SELECT /*+ BROADCAST(bids), NO_SUCH_HINT */ item FROM bids;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); strings.Join(got, "|") != "item|+I[own]" {
		t.Errorf("got %q", got)
	}
	for _, want := range []string{
		"test.sql:5:12: warning: the join hint BROADCAST has no effect",
		"test.sql:5:29: warning: unknown hint 'NO_SUCH_HINT' is ignored",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
