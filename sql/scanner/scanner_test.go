package scanner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/sql/token"
)

type tok struct {
	tok token.Token
	lit string
}

func scanAll(src string, mode Mode) (toks []tok, errs []string) {
	var s Scanner
	s.Init(token.NewFile("", []byte(src)), func(pos token.Position, msg string) {
		errs = append(errs, pos.String()+": "+msg)
	}, mode)
	for {
		_, t, lit := s.Scan()
		if t == token.EOF {
			return toks, errs
		}
		toks = append(toks, tok{t, lit})
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []tok
	}{
		{"SELECT select Select", []tok{{token.SELECT, "SELECT"}, {token.SELECT, "select"}, {token.SELECT, "Select"}}},
		{"abc _x a1$ żółw", []tok{{token.IDENT, "abc"}, {token.IDENT, "_x"}, {token.IDENT, "a1$"}, {token.IDENT, "żółw"}}},
		{"`a``b` `select`", []tok{{token.QIDENT, "a`b"}, {token.QIDENT, "select"}}},
		{"1 12.5 .5 1. 1e5 1.5E-3 2e+1", []tok{
			{token.INT, "1"}, {token.DECIMAL, "12.5"}, {token.DECIMAL, ".5"}, {token.DECIMAL, "1."},
			{token.FLOAT, "1e5"}, {token.FLOAT, "1.5E-3"}, {token.FLOAT, "2e+1"},
		}},
		{"1e 1ex", []tok{{token.INT, "1"}, {token.IDENT, "e"}, {token.INT, "1"}, {token.IDENT, "ex"}}},
		{"'it''s' '' 'a\nb'", []tok{{token.STRING, "it's"}, {token.STRING, ""}, {token.STRING, "a\nb"}}},
		{"'a''' '''b''''c' ````", []tok{{token.STRING, "a'"}, {token.STRING, "'b''c"}, {token.QIDENT, "`"}}},
		{"X'0aFF' x''", []tok{{token.HEX, "0aFF"}, {token.HEX, ""}}},
		{"x 'a'", []tok{{token.IDENT, "x"}, {token.STRING, "a"}}},
		{"= <> != < <= > >= + - * / % || . , ; ( ) [ ] => ::", []tok{
			{token.EQ, "="}, {token.NEQ, "<>"}, {token.NEQ, "!="}, {token.LT, "<"}, {token.LEQ, "<="},
			{token.GT, ">"}, {token.GEQ, ">="}, {token.ADD, "+"}, {token.SUB, "-"}, {token.MUL, "*"},
			{token.QUO, "/"}, {token.REM, "%"}, {token.CONCAT, "||"}, {token.PERIOD, "."},
			{token.COMMA, ","}, {token.SEMICOLON, ";"}, {token.LPAREN, "("}, {token.RPAREN, ")"},
			{token.LBRACK, "["}, {token.RBRACK, "]"}, {token.ARROW, "=>"}, {token.DCOLON, "::"},
		}},
		{"a--comment\nb/* block\n */c", []tok{{token.IDENT, "a"}, {token.IDENT, "b"}, {token.IDENT, "c"}}},
		{"a-b a/b", []tok{{token.IDENT, "a"}, {token.SUB, "-"}, {token.IDENT, "b"}, {token.IDENT, "a"}, {token.QUO, "/"}, {token.IDENT, "b"}}},
		{"t.a", []tok{{token.IDENT, "t"}, {token.PERIOD, "."}, {token.IDENT, "a"}}},
		{"ARRAY<ARRAY<INT>>", []tok{{token.ARRAY, "ARRAY"}, {token.LT, "<"}, {token.ARRAY, "ARRAY"}, {token.LT, "<"}, {token.IDENT, "INT"}, {token.GT, ">"}, {token.GT, ">"}}},
		{"\ufeffSELECT", []tok{{token.SELECT, "SELECT"}}},
	} {
		got, errs := scanAll(tc.src, 0)
		if len(errs) > 0 {
			t.Errorf("%q: unexpected errors %v", tc.src, errs)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %v, want %v", tc.src, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: token %d: got %v, want %v", tc.src, i, got[i], tc.want[i])
			}
		}
	}
}

func TestComments(t *testing.T) {
	got, _ := scanAll("a -- one\n/* two */ b", ScanComments)
	want := []tok{{token.IDENT, "a"}, {token.COMMENT, "-- one"}, {token.COMMENT, "/* two */"}, {token.IDENT, "b"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("token %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestPositions(t *testing.T) {
	src := "SELECT a,\n  'x' FROM t"
	var s Scanner
	f := token.NewFile("q.sql", []byte(src))
	s.Init(f, nil, 0)
	want := []string{"q.sql:1:1", "q.sql:1:8", "q.sql:1:9", "q.sql:2:3", "q.sql:2:7", "q.sql:2:12", "q.sql:2:13"}
	ends := []int{6, 8, 9, 15, 20, 22, 22}
	for i, w := range want {
		pos, _, _ := s.Scan()
		if got := f.Position(pos).String(); got != w {
			t.Errorf("token %d at %s, want %s", i, got, w)
		}
		if got := s.Pos().Offset(); got != ends[i] {
			t.Errorf("token %d ends at %d, want %d", i, got, ends[i])
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"'abc", "1:1: string literal not terminated"},
		{"a\n  'abc\n", "2:3: string literal not terminated"},
		{"`abc", "1:1: quoted identifier not terminated"},
		{"`a``", "1:1: quoted identifier not terminated"},
		{"``", "1:1: empty quoted identifier"},
		{"/* abc", "1:1: comment not terminated"},
		{"X'12", "1:1: hex literal not terminated"},
		{"X'1g'", "1:4: invalid hex digit 'g' in hex literal"},
		{"X'123'", "1:1: hex literal has an odd number of digits"},
		{"a ? b", "1:3: illegal character '?'"},
		{"a ! b", "1:3: illegal character '!'"},
		{"a | b", "1:3: illegal character '|'"},
		{`"a"`, "1:1: unexpected '\"': write 'text' for a string and `name` for a quoted identifier"},
		{"a \xff", "1:3: illegal UTF-8 encoding"},
	} {
		_, errs := scanAll(tc.src, 0)
		if len(errs) == 0 || errs[0] != tc.want {
			t.Errorf("%q: got errors %v, want %q", tc.src, errs, tc.want)
		}
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"SELECT a, 'x''y', `q``r`, X'00', 1.5E-3 FROM t -- c\n/* d */",
		"a <> b != c <= d >= e || f => g :: h",
		"'unterminated", "`unterminated", "/* unterminated", "X'zz'",
	} {
		f.Add(s)
	}
	// The parser's golden files hold SQL of every kind.
	files, err := filepath.Glob("../parser/testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatalf("cannot read seed file: %v", err)
		}
		for _, c := range strings.Split(string(data), "\n\n") {
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		var s Scanner
		file := token.NewFile("", []byte(src))
		s.Init(file, func(token.Position, string) {}, ScanComments)
		prev := token.Pos(0)
		for i := 0; ; i++ {
			pos, tok, _ := s.Scan()
			if pos < prev || pos.Offset() > len(src) {
				t.Fatalf("token %d at %d after %d (len %d)", i, pos, prev, len(src))
			}
			if s.Pos() < pos {
				t.Fatalf("token %d ends at %d before its start %d", i, s.Pos(), pos)
			}
			if tok == token.EOF {
				break
			}
			if s.Pos() == pos {
				t.Fatalf("token %d (%v) is empty: the scanner does not advance", i, tok)
			}
			if i > len(src)+1 {
				t.Fatalf("more tokens than bytes")
			}
			prev = pos
		}
		// EOF is sticky.
		if _, tok, _ := s.Scan(); tok != token.EOF {
			t.Fatalf("Scan after EOF returned %v", tok)
		}
		if strings.Count(src, "\n") != file.LineCount()-1 {
			t.Fatalf("line table has %d lines", file.LineCount())
		}
	})
}
