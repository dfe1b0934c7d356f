package parser

import (
	"path/filepath"
	"testing"

	"github.com/sluicesql/sluice/sql/ast"
)

// FuzzParser parses arbitrary input as a file and as an expression. It must
// never panic, and whatever parses must print as text that parses back to
// the same tree.
func FuzzParser(f *testing.F) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range files {
		cases, _, err := readGoldenFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			f.Add(c.input)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := ParseFile("", []byte(src))
		if err == nil {
			for _, s := range stmts {
				roundTrip(t, s, false)
			}
		} else {
			_ = FormatError(err, []byte(src))
		}
		if x, err := ParseExpr(src); err == nil {
			roundTrip(t, x, true)
		}
	})
}

func roundTrip(t *testing.T, n ast.Node, expr bool) {
	t.Helper()
	text := ast.Format(n)
	var again ast.Node
	var err error
	if expr {
		again, err = ParseExpr(text)
	} else {
		again, err = ParseStatement(text)
	}
	if err != nil {
		t.Fatalf("printed text does not parse: %v\n%s\ntree:\n%s", err, text, ast.Dump(n))
	}
	if want, got := ast.Dump(n), ast.Dump(again); want != got {
		t.Fatalf("round trip changed the tree\nprinted: %s\nbefore:\n%s\nafter:\n%s", text, want, got)
	}
}
