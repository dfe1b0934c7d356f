package sluice_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
)

// runSQL runs src in a fresh engine inside dir and returns what it printed.
func runSQL(t *testing.T, setup func(*sluice.Engine), dir, src string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if setup != nil {
		setup(e)
	}
	src = strings.ReplaceAll(src, "$DIR", dir)
	err = e.Run(context.Background(), "test.sql", []byte(src))
	return out.String(), err
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sortedLines returns the printed rows sorted, the header first.
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 1 {
		sort.Strings(lines[1:])
	}
	return lines
}

const wordsDDL = `
CREATE TABLE lines (id INT, line STRING, n INT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/lines.jsonl', 'format' = 'json');
`

func writeLines(t *testing.T, dir string) {
	writeFile(t, dir, "lines.jsonl", `{"id":1,"line":"a b","n":2}
{"id":2,"line":"","n":3}
{"id":3,"line":"c","n":null}
`)
}

// product is a user aggregate multiplying its BIGINT arguments.
type product struct{ p, n int64 }

func (a *product) Add(args []types.Value) error {
	if !args[0].IsNull() {
		a.p *= args[0].Int()
		a.n++
	}
	return nil
}
func (a *product) Retract([]types.Value) error { return nil }
func (a *product) Merge(o agg.UserAccumulator) error {
	a.p *= o.(*product).p
	a.n += o.(*product).n
	return nil
}
func (a *product) Result() types.Value {
	if a.n == 0 {
		return types.NullValue
	}
	return types.BigIntValue(a.p)
}
func (a *product) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.p)
	return binary.AppendVarint(dst, a.n)
}
func (a *product) LoadState(src []byte) error {
	var k int
	a.p, k = binary.Varint(src)
	a.n, _ = binary.Varint(src[k:])
	return nil
}

func TestUserDefinedFunctions(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, dir)
	setup := func(e *sluice.Engine) {
		err := e.RegisterFunction(expr.ScalarFunction{
			Name:   "TWICE",
			Args:   []types.Type{types.BigInt},
			Result: types.BigInt,
			Eval: func(args []types.Value) (types.Value, error) {
				return types.BigIntValue(2 * args[0].Int()), nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		err = e.RegisterTableFunction(expr.TableFunction{
			Name:   "SPLIT_WORDS",
			Args:   []types.Type{types.String},
			Result: types.NewSchema(types.Column{Name: "word", Type: types.String}),
			Eval: func(args []types.Value, emit func([]types.Value) error) error {
				for _, w := range strings.Fields(args[0].Str()) {
					if err := emit([]types.Value{types.StringValue(w)}); err != nil {
						return err
					}
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		f, err := agg.NewUserFunc(agg.UserAggregate{
			Name: "PRODUCT", Args: []types.Type{types.BigInt}, Result: types.BigInt,
			New: func() agg.UserAccumulator { return &product{p: 1} },
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RegisterAggregate(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, sql string
		want      []string
	}{
		{"scalar", `SELECT id, TWICE(n) AS t FROM lines;`,
			[]string{"id, t", "+I[1, 4]", "+I[2, 6]", "+I[3, null]"}},
		{"create function names a registered one", `CREATE FUNCTION twice AS 'com.example.Twice'; SELECT TWICE(id) FROM lines;`,
			[]string{"EXPR$0", "+I[2]", "+I[4]", "+I[6]"}},
		{"lateral table", `SELECT id, word FROM lines, LATERAL TABLE(SPLIT_WORDS(line)) AS w(word);`,
			[]string{"id, word", "+I[1, a]", "+I[1, b]", "+I[3, c]"}},
		{"left join lateral", `SELECT id, word FROM lines LEFT JOIN LATERAL TABLE(SPLIT_WORDS(line)) AS w(word) ON TRUE;`,
			[]string{"id, word", "+I[1, a]", "+I[1, b]", "+I[2, null]", "+I[3, c]"}},
		{"aggregate", `SELECT PRODUCT(n) AS p FROM lines;`, // INT widened to the declared BIGINT
			[]string{"p", "+I[6]"}}, // one batch: one result
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runSQL(t, setup, dir, wordsDDL+tc.sql)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			got := sortedLines(out)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestCreateFunctionUnknown(t *testing.T) {
	_, err := runSQL(t, nil, t.TempDir(), `CREATE FUNCTION nope AS 'com.example.Nope';`)
	if err == nil || !strings.Contains(err.Error(), "1:17: function 'nope'") {
		t.Fatalf("err = %v", err)
	}
}

func TestShowAndDescribe(t *testing.T) {
	var out bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := `CREATE TABLE bids (bidtime TIMESTAMP(3), price DECIMAL(10, 2) NOT NULL, ts AS PROCTIME(),
	  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');
	SHOW TABLES; DESCRIBE bids;`
	res, err := e.Exec(context.Background(), "t.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res[1].Message, "bids") {
		t.Errorf("SHOW TABLES: %q", res[1].Message)
	}
	desc := res[2].Message
	for _, want := range []string{"TIMESTAMP(3) *ROWTIME*", "DECIMAL(10, 2)", "FALSE", "TIMESTAMP_LTZ(3) *PROCTIME*    FALSE"} {
		if !strings.Contains(desc, want) {
			t.Errorf("DESCRIBE lacks %q:\n%s", want, desc)
		}
	}
}

// Rows of two sources carry the same partition and offsets at the
// connector; the job numbers the sources' partitions apart so that the
// window aggregate's replay check does not drop the second source's rows.
func TestUnionOfSourcesIntoWindow(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", `{"ts":"2020-04-15 08:01:00","v":1}
{"ts":"2020-04-15 08:02:00","v":2}
`)
	writeFile(t, dir, "b.jsonl", `{"ts":"2020-04-15 08:03:00","v":10}
{"ts":"2020-04-15 08:04:00","v":20}
`)
	src := `
CREATE TABLE a (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
CREATE TABLE b (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '$DIR/b.jsonl', 'format' = 'json');
CREATE VIEW u AS SELECT * FROM a UNION ALL SELECT * FROM b;
SELECT window_start, COUNT(*) AS n, SUM(v) AS s
FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;`
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	want := "window_start, n, s\n+I[2020-04-15 08:00:00.000, 4, 33]"
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Connector errors found when a job starts point at the table's DDL: at the
// option they name, or at the connector option.
func TestConnectorErrorsArePositioned(t *testing.T) {
	for _, tc := range []struct{ ddl, want string }{
		{`CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rowz' = '3');`,
			`test.sql:2:55: table t: datagen: unsupported option 'number-of-rowz' (did you mean "number-of-rows"?)`},
		{`CREATE TABLE t (a INT) WITH ('connector' = 'datagn');`,
			`test.sql:2:30: table t: unknown connector 'datagn' (did you mean "datagen"?)`},
	} {
		_, err := runSQL(t, nil, t.TempDir(), "\n"+tc.ddl+"\nSELECT * FROM t;")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v\nwant prefix %s", err, tc.want)
		}
	}
}

// With 'state.dir', a job commits its state and source positions; run again
// over a grown input, it resumes where it stopped: the restored counts go on
// from the committed ones and no row is counted twice.
func TestResumeFromStateDir(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "{\"k\":\"k%d\"}\n", i%3)
		}
		return b.String()
	}
	src := `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
	last := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "+I[") || strings.HasPrefix(l, "+U[") {
				k, v, _ := strings.Cut(strings.TrimSuffix(l[3:], "]"), ", ")
				m[k] = v
			}
		}
		return m
	}
	writeFile(t, dir, "events.jsonl", lines(0, 30))
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := last(out); got["k0"] != "10" || got["k1"] != "10" || got["k2"] != "10" {
		t.Fatalf("first run: %v\n%s", got, out)
	}
	// Six lines are appended: the restored counts (-U[k0, 10]) go on
	// with them alone. (A file whose first lines changed is another
	// file, read again from its start: TestDirectorySourceResumesByFile.)
	writeFile(t, dir, "events.jsonl", lines(0, 36))
	out, err = runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := last(out); got["k0"] != "12" || got["k1"] != "12" || got["k2"] != "12" || len(got) != 3 ||
		!strings.Contains(out, "-U[k0, 10]") || strings.Contains(out, "+I[") {
		t.Fatalf("second run should count only the 6 new rows on top of the restored 10s: %v\n%s", got, out)
	}
}

// TestMiniBatchOption: 'table.exec.mini-batch.*' reach the GROUP BY. The
// source reads 5000 rows of one key in batches of 1024: without a
// mini-batch the key is updated once per batch; with a mini-batch longer
// than the job it emits once, at the end.
func TestMiniBatchOption(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&sb, "{\"k\":\"a\",\"v\":%d}\n", i)
	}
	writeFile(t, dir, "in.jsonl", sb.String())
	const query = `
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
SELECT k, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k;`
	out, err := runSQL(t, nil, dir, query)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "+U["); n < 2 {
		t.Fatalf("without a mini-batch: %d updates, want one per source batch:\n%s", n, out)
	}
	out, err = runSQL(t, nil, dir, `SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 h';`+query)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out), "k, n, s\n+I[a, 5000, 12502500]"; got != want {
		t.Fatalf("with a mini-batch: got\n%s\nwant\n%s", got, want)
	}
	_, err = runSQL(t, nil, dir, `SET 'table.exec.mini-batch.enabled' = 'true';`+query)
	if err == nil || !strings.Contains(err.Error(), "table.exec.mini-batch.allow-latency") {
		t.Fatalf("enabled without a latency: got %v, want an error naming allow-latency", err)
	}
	_, err = runSQL(t, nil, dir, `SET 'table.exec.mini-batch.size' = 'lots';`+query)
	if err == nil || !strings.Contains(err.Error(), "table.exec.mini-batch.size") {
		t.Fatalf("a bad size: got %v, want an error naming the option", err)
	}
}
