package parser

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// A golden file holds cases separated by blank lines: the SQL input, a
// "----" line, then the expected output, which is the ast.Dump of every
// statement or the rendered syntax error. Lines starting with '#' between
// cases are comments. Files named expr*.txt hold expressions.
type goldenCase struct {
	line   int      // line of the first input line
	before []string // comment and blank lines before the case
	input  string
	output string
}

func readGolden(t *testing.T, path string) ([]goldenCase, []string) {
	t.Helper()
	cases, trailer, err := readGoldenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return cases, trailer
}

func readGoldenFile(path string) (cases []goldenCase, trailer []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read golden file: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pending []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pending = append(pending, l)
			i++
			continue
		}
		c := goldenCase{line: i + 1, before: pending}
		pending = nil
		var in []string
		for i < len(lines) && lines[i] != "----" {
			in = append(in, lines[i])
			i++
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: case without ----", path, c.line)
		}
		i++ // ----
		var out []string
		for i < len(lines) && lines[i] != "" {
			out = append(out, lines[i])
			i++
		}
		c.input = strings.Join(in, "\n")
		c.output = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases, pending, nil
}

func writeGolden(t *testing.T, path string, cases []goldenCase, trailer []string) {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		for _, l := range c.before {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.input + "\n----\n" + c.output + "\n")
	}
	for _, l := range trailer {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatalf("cannot write %s: %v", path, err)
	}
}

// parseGolden parses a case's input and returns the nodes and the output.
func parseGolden(exprMode bool, input string) ([]ast.Node, string) {
	if exprMode {
		x, err := ParseExpr(input)
		if err != nil {
			return nil, FormatError(err, []byte(input))
		}
		return []ast.Node{x}, ast.Dump(x)
	}
	stmts, err := ParseFile("", []byte(input))
	if err != nil {
		return nil, FormatError(err, []byte(input))
	}
	var nodes []ast.Node
	var out []string
	for _, s := range stmts {
		nodes = append(nodes, s)
		out = append(out, ast.Dump(s))
	}
	return nodes, strings.Join(out, "\n")
}

func goldenFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	return files
}

func TestGolden(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			exprMode := strings.HasPrefix(filepath.Base(path), "expr")
			cases, trailer := readGolden(t, path)
			for i := range cases {
				c := &cases[i]
				_, got := parseGolden(exprMode, c.input)
				if *rewrite {
					c.output = got
					continue
				}
				if got != c.output {
					t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, c.line, c.input, got, c.output)
				}
			}
			if *rewrite {
				writeGolden(t, path, cases, trailer)
			}
		})
	}
}

// TestRoundTrip checks that printing every parsed golden input and parsing
// the text again gives the same tree, and that printing is stable.
func TestRoundTrip(t *testing.T) {
	for _, path := range goldenFiles(t) {
		exprMode := strings.HasPrefix(filepath.Base(path), "expr")
		cases, _ := readGolden(t, path)
		for _, c := range cases {
			nodes, _ := parseGolden(exprMode, c.input)
			for _, n := range nodes {
				checkRoundTrip(t, n, exprMode, path, c.line)
			}
		}
	}
}

func checkRoundTrip(t *testing.T, n ast.Node, exprMode bool, path string, line int) {
	t.Helper()
	text := ast.Format(n)
	var again ast.Node
	var err error
	if exprMode {
		again, err = ParseExpr(text)
	} else {
		again, err = ParseStatement(text)
	}
	if err != nil {
		t.Errorf("%s:%d: printed text does not parse: %v\n%s", path, line, err, text)
		return
	}
	if want, got := ast.Dump(n), ast.Dump(again); want != got {
		t.Errorf("%s:%d: round trip changed the tree\nprinted: %s\nbefore:\n%s\nafter:\n%s", path, line, text, want, got)
		return
	}
	if text2 := ast.Format(again); text2 != text {
		t.Errorf("%s:%d: printing is not stable:\n%s\n%s", path, line, text, text2)
	}
}

// TestPositions checks that every node of every golden tree has a valid
// extent inside its parent's and inside the source.
func TestPositions(t *testing.T) {
	for _, path := range goldenFiles(t) {
		exprMode := strings.HasPrefix(filepath.Base(path), "expr")
		cases, _ := readGolden(t, path)
		for _, c := range cases {
			nodes, _ := parseGolden(exprMode, c.input)
			for _, n := range nodes {
				checkPositions(t, n, len(c.input), path, c.line)
			}
		}
	}
}

func checkPositions(t *testing.T, root ast.Node, size int, path string, line int) {
	t.Helper()
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		pos, end := n.Pos(), n.End()
		if !pos.IsValid() || !end.IsValid() || end < pos || end.Offset() > size {
			t.Errorf("%s:%d: %T has extent [%d, %d) in a source of %d bytes", path, line, n, pos, end, size)
		}
		if len(stack) > 0 {
			parent := stack[len(stack)-1]
			if pos < parent.Pos() || end > parent.End() {
				t.Errorf("%s:%d: %T [%d, %d) is outside its parent %T [%d, %d)",
					path, line, n, pos, end, parent, parent.Pos(), parent.End())
			}
		}
		stack = append(stack, n)
		return true
	})
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"SELEC * FROM t", `1:1: expected statement, found 'SELEC' (did you mean "SELECT"?)`},
		{"SELECT 'abc FROM t", "1:8: string literal not terminated"},
		{"SELECT a FROM t WHERE", "1:22: expected expression, found end of input"},
		{"SELECT a FROM t\nWHERE", "2:6: expected expression, found end of input"},
		{"SELECT (a + b FROM t", "1:15: expected ')', found 'FROM'"},
		{"SELECT a, , b FROM t", "1:11: expected expression, found ','"},
		{"SELECT CAST(a AS VARCHR) FROM t", `1:18: expected type, found 'VARCHR' (did you mean "VARCHAR"?)`},
		{"SELECT a FROM select", "1:15: expected table name, found reserved keyword 'select' (quote it as `select` to use it as a name)"},
		// MINUS is reserved, as in Flink, and refused as a set operator.
		{"SELECT a FROM t MINUS SELECT a FROM u", "1:17: MINUS is not allowed under the current SQL conformance level, as in Flink: use EXCEPT"},
		{"SELECT minus FROM t", "1:8: expected expression, found reserved keyword 'minus' (quote it as `minus` to use it as a name)"},
	} {
		_, err := ParseStatement(tc.src)
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.src, tc.want)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%q:\ngot  %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestFormatError(t *testing.T) {
	src := "SELECT a\nFROM t\nWHERE a >"
	_, err := ParseFile("job.sql", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	want := "job.sql:3:10: expected expression, found end of input\nWHERE a >\n         ^"
	if got := FormatError(err, []byte(src)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestErrorRecovery(t *testing.T) {
	src := "SELECT 1;\nSELECT FROM;\nSELECT 2;\nCREATE TABLE;\nSELECT 3"
	stmts, err := ParseFile("", []byte(src))
	list, ok := err.(ErrorList)
	if !ok || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if list[0].Pos.Line != 2 || list[1].Pos.Line != 4 {
		t.Errorf("errors on the wrong lines: %v", list)
	}
	if len(stmts) != 3 {
		t.Errorf("want the 3 good statements, got %d", len(stmts))
	}
}

func TestErrorLimit(t *testing.T) {
	src := strings.Repeat("SELECT FROM;\n", 50)
	_, err := ParseFile("", []byte(src))
	list, ok := err.(ErrorList)
	if !ok || len(list) != maxErrors {
		t.Fatalf("want %d errors, got %v", maxErrors, err)
	}
}

func TestNewError(t *testing.T) {
	src := "SELECT a\nFROM nosuch"
	stmt, err := ParseStatement(src)
	if err != nil {
		t.Fatal(err)
	}
	from := stmt.(*ast.QueryStmt).Query.Body.(*ast.Select).From
	e := NewError(token.NewFile("q.sql", []byte(src)), from.Pos(), "table %s not found", "nosuch")
	if got, want := e.Error(), "q.sql:2:6: table nosuch not found"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	list := ErrorList{e}
	if got, want := FormatError(list.Err(), []byte(src)), "q.sql:2:6: table nosuch not found\nFROM nosuch\n     ^"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestDeepNesting(t *testing.T) {
	src := "SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	if _, err := ParseStatement(src); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("want a nesting error, got %v", err)
	}
	src = "SELECT " + strings.Repeat("-", 5000) + "1"
	if _, err := ParseStatement(src); err == nil {
		t.Errorf("want a nesting error")
	}
	src = "SELECT " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)
	if _, err := ParseStatement(src); err != nil {
		t.Errorf("moderate nesting: %v", err)
	}
}

func TestParseStatementTrailing(t *testing.T) {
	if _, err := ParseStatement("SELECT 1;"); err != nil {
		t.Errorf("trailing ';': %v", err)
	}
	if _, err := ParseStatement("SELECT 1; SELECT 2"); err == nil {
		t.Errorf("two statements: want an error")
	}
}

func BenchmarkParse(b *testing.B) {
	src := []byte(`CREATE TABLE bids (
  bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'bids', 'format' = 'json');
INSERT INTO out
SELECT window_start, window_end, item, SUM(price) AS total, COUNT(*) FILTER (WHERE price > 10)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
WHERE item LIKE 'A%' AND price BETWEEN 1 AND 100
GROUP BY window_start, window_end, item;`)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := ParseFile("", src); err != nil {
			b.Fatal(err)
		}
	}
}
