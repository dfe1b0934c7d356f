package sluice_test

import (
	"path/filepath"

	"github.com/sluicesql/sluice/internal/wat"
	"strings"
	"testing"
)

// udfsModule is the test module of internal/wasmudf (its source is
// udfs.wat beside it).
var udfsModule, _ = filepath.Abs("internal/wasmudf/testdata/udfs.wasm")

// wasmFn declares a function of the test module whose export has its
// name.
func wasmFn(decl string) string { return wasmFnAs(decl, decl[:strings.IndexByte(decl, '(')]) }

// wasmFnAs declares a function of the test module.
func wasmFnAs(decl, export string) string {
	return "CREATE FUNCTION " + decl + " AS '" + export + "' LANGUAGE WASM USING JAR 'file://" + udfsModule + "';\n"
}

func TestWasmScalarFunctions(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, dir)
	for _, tc := range []struct {
		name, sql string
		want      []string
	}{
		{"count_char", wasmFn("count_char(s STRING, c STRING) RETURNS BIGINT") +
			`SELECT id, count_char(line, 'b') AS k, count_char('abcabc', 'c') AS c FROM lines;`,
			[]string{"id, k, c", "+I[1, 1, 2]", "+I[2, 0, 2]", "+I[3, 0, 2]"}},
		{"strings out", wasmFnAs("up(s STRING) RETURNS STRING", "upper") +
			`SELECT id, up(line) AS u FROM lines;`,
			[]string{"id, u", "+I[1, A B]", "+I[2, ]", "+I[3, C]"}},
		{"NULL in gives NULL without a call", wasmFn("add_i32(a INT, b INT) RETURNS INT") +
			`SELECT id, add_i32(n, id) AS s FROM lines;`,
			[]string{"id, s", "+I[1, 3]", "+I[2, 5]", "+I[3, null]"}},
		{"NULL out through sluice.null", wasmFn("null_if_negative(x BIGINT) RETURNS BIGINT") +
			`SELECT id, null_if_negative(2 - n) AS v FROM lines;`,
			[]string{"id, v", "+I[1, 0]", "+I[2, null]", "+I[3, null]"}},
		{"CALLED ON NULL INPUT passes a mask", "CREATE FUNCTION nulls(a BIGINT, b STRING) RETURNS BIGINT CALLED ON NULL INPUT AS 'nulls' LANGUAGE WASM USING JAR '" + udfsModule + "';\n" +
			`SELECT id, nulls(n, CASE WHEN id = 1 THEN NULL ELSE line END) AS v FROM lines;`,
			// id 1: b NULL (mask 2) 2000 + 2 + 0; id 2: 3 + 0; id 3: a NULL (mask 1) 1000 + 0 + 1
			[]string{"id, v", "+I[1, 2002]", "+I[2, 3]", "+I[3, 1001]"}},
		{"every slot kind", wasmFnAs("negate(b BOOLEAN) RETURNS BOOLEAN", "not") + wasmFn("next_day(d DATE) RETURNS DATE") +
			wasmFn("plus_day(ts TIMESTAMP(3)) RETURNS TIMESTAMP(3)") + wasmFn("double_it(d DECIMAL(10, 2)) RETURNS DECIMAL(10, 2)") +
			wasmFn("halve(x DOUBLE) RETURNS FLOAT") + wasmFn("widen(x FLOAT) RETURNS DOUBLE") + wasmFn("byte_len(b BYTES) RETURNS INT") +
			`SELECT negate(id = 1) AS a, next_day(DATE '2024-02-28') AS b, plus_day(TIMESTAMP '2024-02-28 10:00:00.123') AS c,
			  double_it(1.25) AS d, halve(3.0) AS e, widen(CAST(0.5 AS FLOAT)) AS f, byte_len(CAST('héllo' AS BYTES)) AS g FROM lines WHERE id = 1;`,
			[]string{"a, b, c, d, e, f, g", "+I[FALSE, 2024-02-29, 2024-02-29 10:00:00.123, 2.50, 1.5, 0.5, 6]"}},
		{"constant arguments are folded once", wasmFn("add_i32(a INT, b INT) RETURNS INT") +
			`SELECT add_i32(40, 2) AS v FROM lines WHERE id = 1;`,
			[]string{"v", "+I[42]"}},
		{"TEMPORARY, IF NOT EXISTS and DROP", "CREATE TEMPORARY FUNCTION IF NOT EXISTS upper2(s STRING) RETURNS STRING AS 'upper' LANGUAGE WASM USING JAR '" + udfsModule + "';\n" +
			"CREATE TEMPORARY FUNCTION IF NOT EXISTS upper2(s STRING) RETURNS STRING AS 'nothing' LANGUAGE WASM USING JAR 'nowhere.wasm';\n" +
			"DROP TEMPORARY FUNCTION upper2; DROP FUNCTION IF EXISTS upper2;\n" +
			"CREATE FUNCTION upper2(s STRING) RETURNS STRING AS 'upper' LANGUAGE WASM USING JAR '" + udfsModule + "';\n" +
			`SELECT upper2(line) AS u FROM lines WHERE id = 3;`,
			[]string{"u", "+I[C]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runSQL(t, nil, dir, wordsDDL+tc.sql)
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

// cdcChanges is a debezium-json changelog of a table (id, k, v).
const cdcChanges = `{"before":null,"after":{"id":1,"k":"a","v":10},"op":"c"}
{"before":null,"after":{"id":2,"k":"b","v":5},"op":"c"}
{"before":null,"after":{"id":3,"k":"a","v":-4},"op":"c"}
{"before":{"id":1,"k":"a","v":10},"after":{"id":1,"k":"a","v":12},"op":"u"}
{"before":{"id":2,"k":"b","v":5},"after":{"id":2,"k":"c","v":5},"op":"u"}
{"before":{"id":3,"k":"a","v":-4},"after":null,"op":"d"}
`

const wasmEventsDDL = `
CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$DIR/cdc.jsonl', 'format' = 'debezium-json');
CREATE TABLE ev (ts TIMESTAMP(3), k STRING, v BIGINT, s STRING, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$DIR/ev.jsonl', 'format' = 'json');
`

func writeEvents(t *testing.T, dir string) {
	writeFile(t, dir, "ev.jsonl", `{"ts":"2024-01-01 00:00:01","k":"a","v":1,"s":"x"}
{"ts":"2024-01-01 00:00:02","k":"a","v":3,"s":"xyz"}
{"ts":"2024-01-01 00:00:03","k":"b","v":10,"s":"hello world"}
{"ts":"2024-01-01 00:00:04","k":"a","v":null,"s":"nothing"}
{"ts":"2024-01-01 00:00:12","k":"b","v":20,"s":"hi"}
`)
}

// Table functions are used as the Go API's are: LATERAL TABLE, with CROSS
// JOIN or LEFT JOIN ... ON TRUE.
func TestWasmTableFunction(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, dir)
	split := "CREATE FUNCTION split_words(s STRING) RETURNS TABLE (word STRING, len INT) AS 'split' LANGUAGE WASM USING JAR '" + udfsModule + "';\n"
	for _, tc := range []struct {
		name, sql string
		want      []string
	}{
		{"lateral table", `SELECT id, word, len FROM lines, LATERAL TABLE(split_words(line));`,
			[]string{"id, word, len", "+I[1, a, 1]", "+I[1, b, 1]", "+I[3, c, 1]"}},
		{"cross join lateral with aliases", `SELECT id, w, l FROM lines CROSS JOIN LATERAL TABLE(split_words(line || ' zz')) AS t(w, l);`,
			[]string{"id, w, l", "+I[1, a, 1]", "+I[1, b, 1]", "+I[1, zz, 2]", "+I[2, zz, 2]", "+I[3, c, 1]", "+I[3, zz, 2]"}},
		{"left join lateral", `SELECT id, word FROM lines LEFT JOIN LATERAL TABLE(split_words(line)) AS w(word, len) ON TRUE;`,
			[]string{"id, word", "+I[1, a]", "+I[1, b]", "+I[2, null]", "+I[3, c]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runSQL(t, nil, dir, wordsDDL+split+tc.sql)
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

func TestWasmAggregates(t *testing.T) {
	dir := t.TempDir()
	writeEvents(t, dir)
	writeFile(t, dir, "cdc.jsonl", cdcChanges)
	fns := wasmFn("my_avg(v BIGINT) RETURNS DOUBLE") + wasmFn("longest(s STRING) RETURNS STRING")
	for _, tc := range []struct {
		name, sql string
		want      []string
	}{
		// NULL arguments are skipped, as SQL's aggregates skip them: a's
		// average is (1 + 3) / 2.
		{"tumbling window", `SELECT k, window_start, my_avg(v) AS a, longest(s) AS l
			FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;`,
			[]string{"k, window_start, a, l", "+I[a, 2024-01-01 00:00:00.000, 2.0, nothing]",
				"+I[b, 2024-01-01 00:00:00.000, 10.0, hello world]", "+I[b, 2024-01-01 00:00:10.000, 20.0, hi]"}},
		// Hopping windows merge slices: my_avg exports my_avg_merge.
		{"hopping window merges", `SELECT window_start, my_avg(v) AS a
			FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end;`,
			[]string{"window_start, a", "+I[2023-12-31 23:59:55.000, 4.666666666666667]", "+I[2024-01-01 00:00:00.000, 4.666666666666667]",
				"+I[2024-01-01 00:00:05.000, 20.0]", "+I[2024-01-01 00:00:10.000, 20.0]"}},
		// An updating GROUP BY over a changelog retracts: my_avg exports
		// my_avg_retract. What remains is (1, a, 12) and (2, c, 5).
		{"updating group by retracts", `SELECT k, my_avg(v) AS a, SUM(v) AS s FROM cdc GROUP BY k;`,
			[]string{"k, a, s", "+I[a, 12.0, 12]", "+I[c, 5.0, 5]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runSQL(t, nil, dir, wasmEventsDDL+fns+tc.sql)
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

// What a module cannot do fails the job, naming the function and what it
// lacks; a trap names the function and the row.
func TestWasmRunTimeErrors(t *testing.T) {
	dir := t.TempDir()
	writeEvents(t, dir)
	writeFile(t, dir, "cdc.jsonl", cdcChanges)
	writeLines(t, dir)
	for _, tc := range []struct{ name, sql, want string }{
		{"no retract", wasmFn("longest(s STRING) RETURNS STRING") + `SELECT k, longest(CAST(v AS STRING)) FROM cdc GROUP BY k;`,
			"cannot retract from LONGEST: its module exports no 'longest_retract', which an updating input needs"},
		{"no merge", wasmFn("longest(s STRING) RETURNS STRING") + `SELECT window_start, longest(s)
			FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end;`,
			"cannot merge two accumulators of LONGEST: its module exports no 'longest_merge'"},
		{"trap in get_value", wasmFn("ratio(a BIGINT, b BIGINT) RETURNS BIGINT") + `SELECT k, ratio(v, v - v) FROM ev GROUP BY k;`,
			"export 'ratio_get_value' trapped: integer divide by zero"},
		{"trap in a scalar function names the row", wasmFn("boom(x INT) RETURNS INT") + `SELECT id, boom(id - 2) FROM lines;`,
			"cannot evaluate column 2 of the row from source partition 0, offset 2: cannot evaluate BOOM: export 'boom' trapped: unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runSQL(t, nil, dir, wasmEventsDDL+wordsDDL+tc.sql)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error with %q\n%s", err, tc.want, out)
			}
		})
	}
}

// A call that does not return within wasm.call-timeout is stopped; the
// job fails naming the function.
func TestWasmCallTimeout(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, dir)
	_, err := runSQL(t, nil, dir, "SET 'wasm.call-timeout' = '50 ms';\n"+wordsDDL+wasmFn("spin(x INT) RETURNS INT")+`SELECT spin(id) FROM lines;`)
	want := "export 'spin' did not return within wasm.call-timeout (50ms)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error with %q", err, want)
	}
}

// CREATE FUNCTION errors point at the part of the statement at fault.
func TestWasmCreateFunctionErrors(t *testing.T) {
	dir := t.TempDir()
	m := udfsModule
	big, err := wat.Assemble([]byte(`(module (memory 2) (func (export "tiny") (param i32) (result i32) (local.get 0)))`))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "big.wasm", string(big))
	for _, tc := range []struct{ sql, want string }{
		{`CREATE FUNCTION f(s STRING) RETURNS BIGINT AS 'count_char' LANGUAGE WASM USING JAR '/no/such/udf.wasm';`,
			`test.sql:1:80: cannot read the module of function f: stat /no/such/udf.wasm: no such file or directory`},
		{`CREATE FUNCTION f(s STRING, c STRING) RETURNS BIGINT AS 'count_chars' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:57: function f: the module exports no function 'count_chars' (a scalar function) nor 'count_chars_accumulate' (an aggregate) (did you mean "count_char"?)`},
		{`CREATE FUNCTION f(s STRING) RETURNS BIGINT AS 'count_char' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:18: function f: export 'count_char' is (i32, i32, i32, i32) -> (i64), but the declared signature of F needs (i32, i32) -> (i64)`},
		{`CREATE FUNCTION f(s STRING, c STRING) RETURNS INT AS 'count_char' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:18: function f: export 'count_char' is (i32, i32, i32, i32) -> (i64), but the declared signature of F needs (i32, i32, i32, i32) -> (i32)`},
		{`CREATE FUNCTION f(a INT, b ARRAY<INT>) RETURNS INT AS 'add_i32' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:28: function f: ARRAY<INT> has no WebAssembly mapping`},
		{`CREATE FUNCTION f(a DECIMAL(20, 2)) RETURNS INT AS 'tiny' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:21: function f: DECIMAL(20, 2) has no WebAssembly mapping: a DECIMAL crosses as its unscaled i64, so its precision must be at most 18`},
		{`CREATE FUNCTION f(a INT) RETURNS INT AS 'add_i32' LANGUAGE JAVA;`,
			`test.sql:1:18: a declared signature is for LANGUAGE WASM functions; this one is LANGUAGE JAVA`},
		{`CREATE FUNCTION f AS 'add_i32' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:18: a WASM function declares its signature: CREATE FUNCTION f(arg TYPE, ...) RETURNS TYPE`},
		{`CREATE FUNCTION f(a INT) RETURNS INT AS 'add_i32' LANGUAGE WASM;`,
			`test.sql:1:64: a WASM function names its module: USING JAR 'file.wasm'`},
		{`CREATE FUNCTION f(a INT) RETURNS INT AS 'add_i32' LANGUAGE WASM USING JAR 'http://example.com/f.wasm';`,
			`test.sql:1:71: module URI 'http://example.com/f.wasm': Sluice reads modules from files`},
		{`CREATE FUNCTION lower(a INT) RETURNS INT AS 'tiny' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:17: function lower already exists`},
		{`CREATE FUNCTION f(a INT, A INT) RETURNS INT AS 'add_i32' LANGUAGE WASM USING JAR '` + m + `';`,
			`test.sql:1:26: parameter A is declared twice`},
		{"SET 'wasm.memory-limit' = '64 kb';\nCREATE FUNCTION f(a INT) RETURNS INT AS 'tiny' LANGUAGE WASM USING JAR '" + dir + "/big.wasm';",
			`test.sql:2:68: function f: cannot compile the module: section memory: min 2 pages (128 Ki) over limit of 1 pages (64 Ki)`},
		{`CREATE FUNCTION f(a INT) RETURNS INT AS 'tiny' LANGUAGE WASM USING JAR '/dev/zero';`,
			`test.sql:1:68: cannot read the module of function f: /dev/zero is not a regular file`},
		{`DROP FUNCTION lower;`, `test.sql:1:15: function lower is built in or registered from Go`},
		{`DROP FUNCTION nope;`, `test.sql:1:15: function nope does not exist`},
	} {
		_, err := runSQL(t, nil, dir, tc.sql)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant %s", tc.sql, err, tc.want)
		}
	}
}
