package sluice_test

import (
	"path/filepath"
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
