package expr

import (
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/types"
)

// Node is a bound, typed expression. Nodes print themselves as SQL-like
// text for EXPLAIN (String()). Nodes are immutable once built: rewrites
// (Fold) build new nodes.
type Node interface {
	// Type is the SQL type of the expression's value.
	Type() types.Type
	// String prints the expression as SQL-like text.
	String() string
}

// Column is a reference to column Index of the input row.
type Column struct {
	Index int
	// Name is the column's name, for printing only.
	Name string
	T    types.Type
}

// Type implements Node.
func (c *Column) Type() types.Type { return c.T }

// String prints the column's name, or $Index when it has none.
func (c *Column) String() string {
	if c.Name == "" {
		return "$" + strconv.Itoa(c.Index)
	}
	return c.Name
}

// Literal is a constant value of type T.
type Literal struct {
	V types.Value
	T types.Type
}

// Type implements Node.
func (l *Literal) Type() types.Type { return l.T }

// String prints the literal in SQL syntax: 'text', 12.30, TRUE, NULL,
// TIMESTAMP '2020-04-15 08:05:00', INTERVAL '...' and so on.
func (l *Literal) String() string {
	v := l.V
	if v.IsNull() {
		if l.T.Kind == types.KindNull {
			return "NULL"
		}
		return "CAST(NULL AS " + l.T.WithNullable(true).String() + ")"
	}
	switch v.Kind() {
	case types.KindChar, types.KindVarChar:
		return quote(v.Str())
	case types.KindBinary, types.KindVarBinary:
		return "X'" + strings.TrimSuffix(strings.TrimPrefix(types.FormatValue(v, l.T), "x'"), "'") + "'"
	case types.KindDate:
		return "DATE '" + types.FormatValue(v, l.T) + "'"
	case types.KindTime:
		return "TIME '" + types.FormatValue(v, l.T) + "'"
	case types.KindTimestamp:
		return "TIMESTAMP '" + types.FormatValue(v, l.T) + "'"
	case types.KindTimestampLTZ:
		return "TIMESTAMP_LTZ '" + types.FormatValue(v, l.T) + "'"
	case types.KindIntervalDayTime:
		return "INTERVAL '" + types.FormatValue(v, l.T) + "' DAY TO SECOND"
	case types.KindIntervalYearMonth:
		return "INTERVAL '" + types.FormatValue(v, l.T) + "' YEAR TO MONTH"
	case types.KindArray:
		return "ARRAY" + elemsString(v, l.T, "[", "]")
	case types.KindRow:
		return "ROW" + elemsString(v, l.T, "(", ")")
	case types.KindTinyInt, types.KindSmallInt, types.KindBigInt, types.KindFloat:
		return "CAST(" + types.FormatValue(v, l.T) + " AS " + l.T.WithNullable(true).String() + ")"
	}
	return types.FormatValue(v, l.T)
}

func elemsString(v types.Value, t types.Type, open, close string) string {
	var b strings.Builder
	b.WriteString(open)
	for i, e := range v.Elems() {
		if i > 0 {
			b.WriteString(", ")
		}
		et := types.Type{Kind: e.Kind()}
		switch {
		case t.Kind == types.KindArray && t.Elem != nil:
			et = *t.Elem
		case t.Kind == types.KindRow && i < len(t.Fields):
			et = t.Fields[i].Type
		}
		b.WriteString((&Literal{V: e, T: et}).String())
	}
	b.WriteString(close)
	return b.String()
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Call is a call of an operator or a function. Build calls with
// Builder.Call, which checks and coerces the arguments.
type Call struct {
	// Name is the upper-case operator or function name ("+", "IS NULL",
	// "UPPER").
	Name string
	// Fn is the function definition the call was bound to.
	Fn   *ScalarFunction
	Args []Node
	T    types.Type
}

// Type implements Node.
func (c *Call) Type() types.Type { return c.T }

// String prints the call in SQL syntax.
func (c *Call) String() string {
	var b strings.Builder
	c.write(&b)
	return b.String()
}

func joinArgs(b *strings.Builder, args []Node) {
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		writeNode(b, a)
	}
}

// writeNode prints n into b; calls print their arguments into the same
// builder, so that printing a deep tree is linear in its size.
func writeNode(b *strings.Builder, n Node) {
	if c, ok := n.(*Call); ok {
		c.write(b)
		return
	}
	b.WriteString(n.String())
}

// put prints strings and nodes in order.
func put(b *strings.Builder, parts ...any) {
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			b.WriteString(p)
		case Node:
			writeNode(b, p)
		}
	}
}

// unitOf returns the text of a unit or mode literal argument.
func unitOf(n Node) string {
	if l, ok := n.(*Literal); ok && l.V.Kind().IsString() {
		return l.V.Str()
	}
	return n.String()
}

func (c *Call) write(b *strings.Builder) {
	a := c.Args
	syn := synFunc
	if c.Fn != nil && c.Fn.builtin != nil {
		syn = c.Fn.builtin.syntax
	}
	switch syn {
	case synInfix:
		if len(a) == 2 {
			put(b, "(", a[0], " ", c.Name, " ", a[1], ")")
			return
		}
	case synLike:
		put(b, "(", a[0], " ", c.Name, " ", a[1])
		if len(a) > 2 {
			put(b, " ESCAPE ", a[2])
		}
		b.WriteString(")")
		return
	case synPrefix:
		if c.Name == "NEG" {
			put(b, "-", a[0])
		} else {
			put(b, c.Name, " ", a[0])
		}
		return
	case synPostfix:
		put(b, "(", a[0], " ", c.Name, ")")
		return
	case synIn:
		put(b, "(", a[0], " ", c.Name, " (")
		joinArgs(b, a[1:])
		b.WriteString("))")
		return
	case synBetween:
		put(b, "(", a[0], " ", c.Name, " ", a[1], " AND ", a[2], ")")
		return
	case synNiladic:
		if len(a) == 0 {
			b.WriteString(c.Name)
			return
		}
	}
	switch c.Name {
	case "ITEM":
		put(b, a[0], "[", a[1], "]")
		return
	case "FIELD":
		put(b, a[0], ".", unitOf(a[1]))
		return
	case "ARRAY", "MAP":
		put(b, c.Name, "[")
		joinArgs(b, a)
		b.WriteString("]")
		return
	case "EXTRACT":
		put(b, "EXTRACT(", unitOf(a[0]), " FROM ", a[1], ")")
		return
	case "TRIM":
		put(b, "TRIM(", unitOf(a[0]), " ", a[1], " FROM ", a[2], ")")
		return
	case "POSITION":
		put(b, "POSITION(", a[0], " IN ", a[1], ")")
		return
	case "FLOOR", "CEIL", "CEILING":
		if len(a) == 2 && isUnitArg(a[1]) {
			put(b, c.Name, "(", a[0], " TO ", unitOf(a[1]), ")")
			return
		}
	case "TIMESTAMPADD", "TIMESTAMPDIFF":
		put(b, c.Name, "(", unitOf(a[0]), ", ")
		joinArgs(b, a[1:])
		b.WriteString(")")
		return
	}
	put(b, c.Name, "(")
	joinArgs(b, a)
	b.WriteString(")")
}

// Cast converts X to type T; Try makes a failed conversion NULL instead of
// an error. Build casts with Builder.Cast.
type Cast struct {
	X   Node
	T   types.Type
	Try bool
}

// Type implements Node.
func (c *Cast) Type() types.Type { return c.T }

// String prints CAST(x AS t) or TRY_CAST(x AS t).
func (c *Cast) String() string {
	name := "CAST("
	if c.Try {
		name = "TRY_CAST("
	}
	return name + c.X.String() + " AS " + c.T.WithNullable(true).WithoutTimeAttr().String() + ")"
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END. With an Operand,
// each When is compared with it by '='; without, each When is a BOOLEAN
// condition. A missing Else is NULL. Build it with Builder.Case.
type Case struct {
	Operand Node
	Whens   []Node
	Thens   []Node
	Else    Node
	T       types.Type
}

// Type implements Node.
func (c *Case) Type() types.Type { return c.T }

// String prints the CASE expression.
func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if c.Operand != nil {
		b.WriteString(" " + c.Operand.String())
	}
	for i := range c.Whens {
		b.WriteString(" WHEN " + c.Whens[i].String() + " THEN " + c.Thens[i].String())
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + c.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// Children returns the direct operands of n, in order.
func Children(n Node) []Node {
	switch n := n.(type) {
	case *Call:
		return n.Args
	case *Cast:
		return []Node{n.X}
	case *Case:
		var out []Node
		if n.Operand != nil {
			out = append(out, n.Operand)
		}
		for i := range n.Whens {
			out = append(out, n.Whens[i], n.Thens[i])
		}
		if n.Else != nil {
			out = append(out, n.Else)
		}
		return out
	}
	return nil
}

// Walk calls f for n and, while f returns true, for its operands, depth
// first.
func Walk(n Node, f func(Node) bool) {
	if !f(n) {
		return
	}
	for _, c := range Children(n) {
		Walk(c, f)
	}
}

// Conjuncts splits n at its ANDs: the conditions that must all hold.
func Conjuncts(n Node) []Node {
	if c, ok := n.(*Call); ok && c.Name == "AND" {
		var out []Node
		for _, a := range c.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []Node{n}
}

// Columns returns the input columns n references, sorted and without
// duplicates.
func Columns(n Node) []int {
	var out []int
	Walk(n, func(x Node) bool {
		if c, ok := x.(*Column); ok {
			out = append(out, c.Index)
		}
		return true
	})
	if len(out) == 0 {
		return nil
	}
	// Insertion sort and dedup: expressions reference few columns.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	w := 1
	for i := 1; i < len(out); i++ {
		if out[i] != out[w-1] {
			out[w] = out[i]
			w++
		}
	}
	return out[:w]
}

// IsConstant reports whether n references no column and calls only
// deterministic functions, so that it has the same value for every row and
// Fold may evaluate it once.
func IsConstant(n Node) bool {
	ok := true
	Walk(n, func(x Node) bool {
		switch x := x.(type) {
		case *Column:
			ok = false
		case *Call:
			if x.Fn == nil || x.Fn.NonDeterministic {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// IsDeterministic reports whether n calls only deterministic functions, so
// that evaluating it twice over the same row gives the same value (or the
// same failure). Expressions compiled together evaluate such a repeated
// sub-expression once per row (CompileProgram).
func IsDeterministic(n Node) bool {
	ok := true
	Walk(n, func(x Node) bool {
		if c, isCall := x.(*Call); isCall && (c.Fn == nil || c.Fn.NonDeterministic) {
			ok = false
		}
		return ok
	})
	return ok
}

// MapColumns returns n with every Column replaced by f(column); nodes that
// do not change are shared. The planner uses it to re-base expressions on a
// different input.
func MapColumns(n Node, f func(*Column) Node) Node {
	switch x := n.(type) {
	case *Column:
		return f(x)
	case *Call:
		args, changed := mapAll(x.Args, f)
		if !changed {
			return x
		}
		c := *x
		c.Args = args
		return &c
	case *Cast:
		y := MapColumns(x.X, f)
		if y == x.X {
			return x
		}
		c := *x
		c.X = y
		return &c
	case *Case:
		c := *x
		changed := false
		if x.Operand != nil {
			c.Operand = MapColumns(x.Operand, f)
			changed = c.Operand != x.Operand
		}
		var ch bool
		c.Whens, ch = mapAll(x.Whens, f)
		changed = changed || ch
		c.Thens, ch = mapAll(x.Thens, f)
		changed = changed || ch
		if x.Else != nil {
			c.Else = MapColumns(x.Else, f)
			changed = changed || c.Else != x.Else
		}
		if !changed {
			return x
		}
		return &c
	}
	return n
}

func mapAll(ns []Node, f func(*Column) Node) ([]Node, bool) {
	var out []Node
	for i, a := range ns {
		b := MapColumns(a, f)
		if b != a && out == nil {
			out = make([]Node, len(ns))
			copy(out, ns[:i])
		}
		if out != nil {
			out[i] = b
		}
	}
	if out == nil {
		return ns, false
	}
	return out, true
}
