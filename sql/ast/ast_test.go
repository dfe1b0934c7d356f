package ast

import (
	"strings"
	"testing"
)

func id(name string) *Ident { return &Ident{Name: name} }

func col(name string) *ColumnRef { return &ColumnRef{Parts: []*Ident{id(name)}} }

func num(v string) *Literal { return &Literal{Kind: Number, Value: v} }

func TestFormatIdent(t *testing.T) {
	for _, tc := range []struct {
		id   *Ident
		want string
	}{
		{id("a"), "a"},
		{id("select"), "`select`"},
		{id("data"), "data"},
		{id("a b"), "`a b`"},
		{id("a`b"), "`a``b`"},
		{id("1a"), "`1a`"},
		{id("a1$"), "a1$"},
		{id("żółw"), "żółw"},
		{id(""), "``"},
		{&Ident{Name: "a", Quoted: true}, "`a`"},
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.id.Name, got, tc.want)
		}
	}
	n := &ObjectName{Parts: []*Ident{id("cat"), id("order"), id("t")}}
	if got := n.String(); got != "cat.`order`.t" {
		t.Errorf("ObjectName: %s", got)
	}
}

// TestFormatParens checks that Format adds the parentheses that hand-built
// trees need.
func TestFormatParens(t *testing.T) {
	for _, tc := range []struct {
		x    Expr
		want string
	}{
		{&Binary{X: &Binary{X: col("a"), Op: "+", Y: col("b")}, Op: "*", Y: col("c")}, "(a + b) * c"},
		{&Binary{X: col("a"), Op: "-", Y: &Binary{X: col("b"), Op: "-", Y: col("c")}}, "a - (b - c)"},
		{&Binary{X: &Binary{X: col("a"), Op: "-", Y: col("b")}, Op: "-", Y: col("c")}, "a - b - c"},
		{&Unary{Op: "NOT", X: &Binary{X: col("a"), Op: "AND", Y: col("b")}}, "NOT (a AND b)"},
		{&Unary{Op: "-", X: &Unary{Op: "-", X: num("1")}}, "- -1"},
		{&Unary{Op: "-", X: &Binary{X: col("a"), Op: "+", Y: col("b")}}, "-(a + b)"},
		{&FieldAccess{X: col("r"), Name: id("f")}, "(r).f"},
		{&FieldAccess{X: num("1"), Name: id("f")}, "(1).f"},
		{&Index{X: &Binary{X: col("a"), Op: "||", Y: col("b")}, Index: num("1")}, "(a || b)[1]"},
		{&Between{X: col("a"), Lo: &Binary{X: col("b"), Op: "=", Y: col("c")}, Hi: col("d")}, "a BETWEEN (b = c) AND d"},
		{&IsExpr{X: &Binary{X: col("a"), Op: "OR", Y: col("b")}, What: "NULL"}, "(a OR b) IS NULL"},
		{&Call{Name: &ObjectName{Parts: []*Ident{id("CURRENT_TIMESTAMP")}}}, "CURRENT_TIMESTAMP"},
		{&Call{Name: &ObjectName{Parts: []*Ident{id("f")}}}, "f()"},
	} {
		if got := Format(tc.x); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
	q := &Query{Body: &SetOp{Op: "UNION", Left: &Select{Items: []*SelectItem{{Star: true}}, From: &TableName{Name: &ObjectName{Parts: []*Ident{id("a")}}}},
		Right: &SetOp{Op: "UNION", All: true, Left: &Values{Rows: [][]Expr{{num("1")}}}, Right: &Values{Rows: [][]Expr{{num("2")}}}}}}
	if got, want := Format(q), "SELECT * FROM a UNION (VALUES (1) UNION ALL VALUES (2))"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// nodeCounter counts visits and checks that Visit(nil) balances them.
type nodeCounter struct {
	depth, max int
	kinds      []string
}

func (c *nodeCounter) Visit(n Node) Visitor {
	if n == nil {
		c.depth--
		return nil
	}
	c.depth++
	if c.depth > c.max {
		c.max = c.depth
	}
	name := strings.TrimPrefix(strings.TrimPrefix(typeName(n), "*"), "ast.")
	c.kinds = append(c.kinds, name)
	return c
}

func typeName(n Node) string {
	switch n.(type) {
	case *Ident:
		return "Ident"
	case *ColumnRef:
		return "ColumnRef"
	case *Binary:
		return "Binary"
	case *Literal:
		return "Literal"
	case *Call:
		return "Call"
	case *ObjectName:
		return "ObjectName"
	case *WindowSpec:
		return "WindowSpec"
	case *FrameBound:
		return "FrameBound"
	case *OrderItem:
		return "OrderItem"
	}
	return "other"
}

func TestWalk(t *testing.T) {
	// SUM(a + 1) OVER (ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
	x := &Call{
		Name: &ObjectName{Parts: []*Ident{id("SUM")}},
		Args: []Expr{&Binary{X: col("a"), Op: "+", Y: num("1")}},
		Over: &WindowSpec{
			OrderBy: []*OrderItem{{Expr: col("b")}},
			Frame: &Frame{Rows: true, Start: &FrameBound{Kind: "PRECEDING", Offset: num("1")},
				End: &FrameBound{Kind: "CURRENT ROW"}},
		},
	}
	var c nodeCounter
	Walk(&c, x)
	want := "Call ObjectName Ident Binary ColumnRef Ident Literal WindowSpec OrderItem ColumnRef Ident FrameBound Literal FrameBound"
	if got := strings.Join(c.kinds, " "); got != want {
		t.Errorf("visit order:\n%s\nwant:\n%s", got, want)
	}
	if c.depth != 0 {
		t.Errorf("unbalanced Visit(nil): depth %d", c.depth)
	}

	// Inspect stops descending when f returns false.
	var idents int
	Inspect(x, func(n Node) bool {
		if _, ok := n.(*Ident); ok {
			idents++
		}
		_, isWindow := n.(*WindowSpec)
		return !isWindow
	})
	if idents != 2 {
		t.Errorf("Inspect saw %d identifiers, want 2 (none inside the window)", idents)
	}
}

func TestDump(t *testing.T) {
	x := &Binary{X: col("a"), Op: "+", Y: &Literal{Kind: String, Value: "x"}}
	want := "(Binary\n  X: (ColumnRef Parts: [a])\n  Op: \"+\"\n  Y: (Literal Kind: String Value: \"x\"))"
	if got := Dump(x); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
