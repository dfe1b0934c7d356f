package token

import (
	"fmt"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		word string
		want Token
	}{
		{"select", SELECT}, {"SELECT", SELECT}, {"SeLeCt", SELECT},
		{"comment", COMMENT_KW}, {"watermark", WATERMARK}, {"timestamp_ltz", TIMESTAMP_LTZ},
		{"foo", IDENT}, {"", IDENT}, {"averyveryveryverylongidentifiername", IDENT},
		{"year", IDENT}, {"string", IDENT},
	} {
		if got := Lookup(tc.word); got != tc.want {
			t.Errorf("Lookup(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}

func TestKeywordClasses(t *testing.T) {
	for tok := Token(0); tok < keywordEnd; tok++ {
		if tok.IsKeyword() && Lookup(tok.String()) != tok {
			t.Errorf("keyword %v does not look up to itself", tok)
		}
		if tok.IsReserved() && !tok.IsKeyword() {
			t.Errorf("%v is reserved but not a keyword", tok)
		}
		n := 0
		for _, b := range []bool{tok.IsLiteral(), tok.IsOperator(), tok.IsKeyword()} {
			if b {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%v is in %d classes", tok, n)
		}
		if tok.IsKeyword() && len(tok.String()) > maxKeywordLen {
			t.Errorf("keyword %v is longer than maxKeywordLen", tok)
		}
	}
	if !SELECT.IsReserved() || WATERMARK.IsReserved() || TIMESTAMP.IsReserved() {
		t.Error("wrong reserved classes")
	}
	if !IsReservedWord("from") || IsReservedWord("data") {
		t.Error("IsReservedWord")
	}
}

func TestTimeUnit(t *testing.T) {
	for _, tc := range []struct {
		word, want string
		ok         bool
	}{
		{"minute", "MINUTE", true}, {"MINUTES", "MINUTE", true}, {"Dow", "DOW", true},
		{"fortnight", "", false},
	} {
		got, ok := TimeUnit(tc.word)
		if got != tc.want || ok != tc.ok {
			t.Errorf("TimeUnit(%q) = %q, %v", tc.word, got, ok)
		}
	}
	if !IsIntervalUnit("SECOND") || IsIntervalUnit("WEEK") {
		t.Error("IsIntervalUnit")
	}
}

func TestPosition(t *testing.T) {
	src := []byte("ab\ncd\r\n\nefg")
	f := NewFile("f.sql", src)
	for _, tc := range []struct {
		off  int
		want string
	}{
		{0, "f.sql:1:1"}, {2, "f.sql:1:3"}, {3, "f.sql:2:1"}, {7, "f.sql:3:1"}, {8, "f.sql:4:1"},
		{11, "f.sql:4:4"}, {100, "f.sql:4:4"},
	} {
		if got := f.Position(PosOf(tc.off)).String(); got != tc.want {
			t.Errorf("offset %d: %s, want %s", tc.off, got, tc.want)
		}
	}
	if got := f.Position(NoPos).String(); got != "f.sql" {
		t.Errorf("NoPos: %q", got)
	}
	if got := NewFile("", src).Position(PosOf(4)).String(); got != "2:2" {
		t.Errorf("no file name: %q", got)
	}
	if got := (Position{}).String(); got != "-" {
		t.Errorf("zero position: %q", got)
	}
	for n, want := range []string{"", "ab", "cd", "", "efg", ""} {
		if got := f.Line(n); got != want {
			t.Errorf("Line(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestErrorList(t *testing.T) {
	var l ErrorList
	if l.Err() != nil {
		t.Fatal("empty list is an error")
	}
	l.Add(Position{Line: 3, Column: 1}, "c")
	l.Add(Position{Line: 1, Column: 5}, "b1")
	l.Add(Position{Line: 1, Column: 5}, "a2")
	l.Add(Position{Line: 1, Column: 2}, "a")
	l.RemoveMultiples()
	if got := fmt.Sprint([]*Error(l)); got != "[1:2: a 3:1: c]" {
		t.Errorf("RemoveMultiples: %s", got)
	}
	if got := l.Err().Error(); got != "1:2: a (and 1 more errors)" {
		t.Errorf("Error: %q", got)
	}
}

func TestFormat(t *testing.T) {
	src := []byte("SELECT a\n\tFROM t WHERE")
	f := NewFile("q.sql", src)
	var l ErrorList
	l = append(l, NewError(f, PosOf(8), "first"), NewError(f, PosOf(len(src)), "second"))
	want := "q.sql:1:9: first\nSELECT a\n        ^\nq.sql:2:14: second\n\tFROM t WHERE\n\t            ^"
	if got := Format(l, src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	wrapped := fmt.Errorf("cannot plan job: %w", l)
	if got := Format(wrapped, src); got != want {
		t.Errorf("wrapped: got:\n%s", got)
	}
	if got := Format(fmt.Errorf("plain"), src); got != "plain" {
		t.Errorf("plain: %q", got)
	}
	if got := NewError(nil, PosOf(3), "no file").Error(); got != "no file" {
		t.Errorf("no file: %q", got)
	}
}

func TestFormatMasked(t *testing.T) {
	src := []byte("x 'pw=SECRET' y 'pw=SECRET'")
	f := NewFile("q.sql", src)
	mask := func(s string) string { return strings.ReplaceAll(s, "SECRET", "*") }
	// The caret stays under the second quote, which the mask moved left.
	err := NewError(f, PosOf(16), "bad SECRET")
	want := "q.sql:1:17: bad *\nx 'pw=*' y 'pw=*'\n           ^"
	if got := FormatMasked(err, src, mask); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := FormatMasked(fmt.Errorf("plain SECRET"), src, mask); got != "plain *" {
		t.Errorf("plain: %q", got)
	}
}
