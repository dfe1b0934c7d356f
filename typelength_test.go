package sluice_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

const typeLengthDDL = `
CREATE TABLE t (s STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
`

func writeWords(t *testing.T, dir string) {
	writeFile(t, dir, "in.jsonl", "{\"s\":\"hello\"}\n{\"s\":\"ab\"}\n")
}

// readOut returns the lines a filesystem sink wrote to dir/name.
func readOut(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// TestVarCharWithoutLength: in Flink SQL, VARCHAR and VARBINARY without a
// length are VARCHAR(2147483647) and VARBINARY(2147483647), the same as
// STRING and BYTES (FlinkTypeSystem's default precision); CHAR and BINARY
// without one are CHAR(1) and BINARY(1). A computed string written to a
// VARCHAR column, or cast to VARCHAR, keeps all its characters.
func TestVarCharWithoutLength(t *testing.T) {
	dir := t.TempDir()
	writeWords(t, dir)
	out, err := runSQL(t, nil, dir, typeLengthDDL+`
CREATE TABLE o (v VARCHAR, b VARBINARY) WITH ('connector' = 'filesystem', 'path' = '$DIR/o.csv', 'format' = 'csv');
INSERT INTO o SELECT UPPER(s), CAST(s AS VARBINARY) FROM t;
SELECT CAST(s AS VARCHAR) AS v, CAST(s AS CHAR) AS c, CAST(CAST(s AS VARBINARY) AS STRING) AS vb,
  CAST(CAST(s AS BINARY) AS STRING) AS b FROM t;
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readOut(t, dir, "o.csv"), "HELLO,aGVsbG8=\nAB,YWI="; got != want {
		t.Errorf("INSERT INTO a VARCHAR column wrote\n%s\nwant\n%s", got, want)
	}
	want := []string{"v, c, vb, b", "+I[ab, a, ab, a]", "+I[hello, h, hello, h]"}
	if got := sortedLines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CAST printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDescribeVarChar: DESCRIBE prints VARCHAR without a length as
// STRING, as Flink does, and takes lengths up to 2147483647.
func TestDescribeVarChar(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "t.sql", []byte(`CREATE TABLE d (a VARCHAR, b VARBINARY, c CHAR, d BINARY,
	  e VARCHAR(2147483647), f CHAR(2147483647)) WITH ('connector' = 'blackhole');
	DESCRIBE d;`))
	if err != nil {
		t.Fatal(err)
	}
	desc := res[1].Message
	got := map[string]string{}
	for _, line := range strings.Split(desc, "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 2 {
			got[f[0]] = f[1]
		}
	}
	for col, want := range map[string]string{"a": "STRING", "b": "BYTES", "c": "CHAR(1)", "d": "BINARY(1)", "e": "STRING", "f": "CHAR(2147483647)"} {
		if got[col] != want {
			t.Errorf("DESCRIBE: column %s is %s, want %s:\n%s", col, got[col], want, desc)
		}
	}
}

// TestSinkTypeLengthEnforcer: Flink writes a value into a sink's CHAR(n),
// VARCHAR(n), BINARY(n) or VARBINARY(n) column as the query computed it,
// unless 'table.exec.sink.type-length-enforcer' says otherwise: IGNORE
// (the default) leaves it alone; TRIM_PAD cuts longer values to n and pads
// shorter CHAR values with spaces and BINARY values with zero bytes
// (Flink's ConstraintEnforcer); ERROR fails the job on a value of another
// length (a CHAR or BINARY value shorter than n too), with Flink's message.
// An explicit CAST cuts and pads whatever the option says.
func TestSinkTypeLengthEnforcer(t *testing.T) {
	const job = `
CREATE TABLE o (c CHAR(3), v VARCHAR(2), b BINARY(3), vb VARBINARY(2), s STRING, x VARCHAR(2))
WITH ('connector' = 'filesystem', 'path' = '$DIR/o.csv', 'format' = 'csv');
INSERT INTO o SELECT s, s, CAST(s AS BYTES), CAST(s AS BYTES), s, CAST(s AS VARCHAR(1)) FROM t;
`
	for _, tc := range []struct {
		set, want, err string
	}{
		{"", "hello,hello,aGVsbG8=,aGVsbG8=,hello,h\nab,ab,YWI=,YWI=,ab,a", ""},
		{"SET 'table.exec.sink.type-length-enforcer' = 'IGNORE';", "hello,hello,aGVsbG8=,aGVsbG8=,hello,h\nab,ab,YWI=,YWI=,ab,a", ""},
		// 'hel', 'he', "hel", "he"; 'ab ' padded, "ab\x00" padded.
		{"SET 'table.exec.sink.type-length-enforcer' = 'TRIM_PAD';", "hel,he,aGVs,aGU=,hello,h\nab ,ab,YWIA,YWI=,ab,a", ""},
		{"SET 'table.exec.sink.type-length-enforcer' = 'error';", "",
			"Column 'c' is CHAR(3), however, a string of length 5 is being written into it. You can set job configuration 'table.exec.sink.type-length-enforcer' to control this behaviour."},
	} {
		dir := t.TempDir()
		writeWords(t, dir)
		_, err := runSQL(t, nil, dir, tc.set+typeLengthDDL+job)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got error %v, want one containing %q", tc.set, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.set, err)
		}
		if got := readOut(t, dir, "o.csv"); got != tc.want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", tc.set, got, tc.want)
		}
	}
}

// TestSinkTypeLengthEnforcerShortChar: with ERROR, a CHAR(n) or BINARY(n)
// value shorter than n fails the job too (it would be padded), and a
// VARCHAR(n) value shorter than n does not.
func TestSinkTypeLengthEnforcerShortChar(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{\"s\":\"ab\"}\n")
	_, err := runSQL(t, nil, dir, `SET 'table.exec.sink.type-length-enforcer' = 'ERROR';`+typeLengthDDL+`
CREATE TABLE o (v VARCHAR(3), b BINARY(3)) WITH ('connector' = 'filesystem', 'path' = '$DIR/o.csv', 'format' = 'csv');
INSERT INTO o SELECT s, CAST(s AS BYTES) FROM t;
`)
	want := "Column 'b' is BINARY(3), however, a string of length 2 is being written into it."
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got error %v, want one containing %q", err, want)
	}
}

// TestSinkTypeLengthEnforcerSetting: an unknown value is refused at SET.
func TestSinkTypeLengthEnforcerSetting(t *testing.T) {
	_, err := runSQL(t, nil, t.TempDir(), `SET 'table.exec.sink.type-length-enforcer' = 'TRIM';`)
	want := "test.sql:1:1: table.exec.sink.type-length-enforcer must be 'IGNORE', 'TRIM_PAD' or 'ERROR', got 'TRIM'"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got error %v, want %q", err, want)
	}
}

// TestSinkTypeLengthEnforcerCharacters: lengths count characters, not
// bytes, as Flink's numChars does.
func TestSinkTypeLengthEnforcerCharacters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{\"s\":\"grüße\"}\n")
	_, err := runSQL(t, nil, dir, `SET 'table.exec.sink.type-length-enforcer' = 'TRIM_PAD';`+typeLengthDDL+`
CREATE TABLE o (a VARCHAR(3), b VARCHAR(6), c CHAR(6), d CHAR(4)) WITH ('connector' = 'filesystem', 'path' = '$DIR/o.csv', 'format' = 'csv');
INSERT INTO o SELECT s, s, s, s FROM t;
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readOut(t, dir, "o.csv"), "grü,grüße,grüße ,grüß"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestRaggedStringUnion: the common type of CHAR values of different
// lengths is a VARCHAR (Flink's type system converts "ragged" unions to
// varying), so that UNION and VALUES do not pad the shorter ones with
// spaces: 'a' stays 'a' beside 'abc'.
func TestRaggedStringUnion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{\"s\":\"x\"}\n")
	out, err := runSQL(t, nil, dir, typeLengthDDL+`
SELECT CONCAT('[', x, ']') AS x FROM (SELECT 'a' AS x FROM t UNION ALL SELECT 'abc' AS x FROM t);
SELECT CONCAT('[', v, ']') AS v FROM (VALUES ('a'), ('abc')) AS r(v);
SELECT CONCAT('[', CASE WHEN s = 'x' THEN 'a' ELSE 'abc' END, ']') AS c FROM t;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c", "v", "x", "+I[[a]]", "+I[[a]]", "+I[[a]]", "+I[[abc]]", "+I[[abc]]"}
	got := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
