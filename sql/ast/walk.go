package ast

import "fmt"

// A Visitor's Visit method is called by Walk for every node. If it returns a
// non-nil visitor w, Walk visits the children of the node with w and then
// calls w.Visit(nil).
type Visitor interface {
	Visit(n Node) (w Visitor)
}

// Walk traverses the tree rooted at n in depth-first, source order. It calls
// v.Visit(n); if that returns a non-nil w, Walk visits each non-nil child
// with w, then calls w.Visit(nil). Frames are not nodes: their bounds are
// visited as children of the WindowSpec.
func Walk(v Visitor, n Node) {
	if v = v.Visit(n); v == nil {
		return
	}
	switch n := n.(type) {
	// Names and types.
	case *Ident:
	case *ObjectName:
		walkIdents(v, n.Parts)
	case *TypeExpr:
		walkType(v, n.Elem)
		walkType(v, n.Value)
		for _, f := range n.Fields {
			Walk(v, f)
		}
	case *RowField:
		Walk(v, n.Name)
		walkType(v, n.Type)

	// Statements.
	case *CreateTable:
		Walk(v, n.Name)
		for _, c := range n.Columns {
			Walk(v, c)
		}
		if n.Watermark != nil {
			Walk(v, n.Watermark)
		}
		walkIdent(v, n.PrimaryKeyName)
		walkIdents(v, n.PrimaryKey)
		walkIdents(v, n.PartitionedBy)
		for _, o := range n.Options {
			Walk(v, o)
		}
		walkName(v, n.Like)
	case *ColumnDef:
		Walk(v, n.Name)
		walkType(v, n.Type)
		walkExpr(v, n.Computed)
	case *WatermarkDef:
		Walk(v, n.Column)
		walkExpr(v, n.Expr)
	case *Option:
	case *Hint:
		Walk(v, n.Name)
		walkIdents(v, n.List)
		for _, o := range n.KeyValues {
			Walk(v, o)
		}
	case *CreateView:
		Walk(v, n.Name)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *Drop:
		Walk(v, n.Name)
	case *CreateRuleset:
		Walk(v, n.Name)
		Walk(v, n.Source)
		walkExpr(v, n.Except)
		if n.Suppress != nil {
			Walk(v, n.Suppress)
		}
		for _, r := range n.Rules {
			Walk(v, r)
		}
	case *RulesetSuppress:
		walkIdents(v, n.Keys)
		Walk(v, n.Interval)
	case *CreateMetricGroup:
		Walk(v, n.Name)
		Walk(v, n.Source)
		walkIdents(v, n.Keys)
		for _, m := range n.Metrics {
			Walk(v, m)
		}
	case *MetricDef:
		Walk(v, n.Name)
		walkExpr(v, n.Agg)
		if n.Window.Slide != nil {
			Walk(v, n.Window.Slide)
		}
		if n.Window.Size != nil {
			Walk(v, n.Window.Size)
		}
	case *AlterMetricGroup:
		Walk(v, n.Name)
		if n.Metric != nil {
			Walk(v, n.Metric)
		}
		if n.Target != nil {
			Walk(v, n.Target)
		}
	case *RuleDef:
		Walk(v, n.Name)
		walkExpr(v, n.When)
	case *AlterRuleset:
		Walk(v, n.Name)
		if n.Rule != nil {
			Walk(v, n.Rule)
		}
		if n.Target != nil {
			Walk(v, n.Target)
		}
		walkExpr(v, n.Except)
		if n.Suppress != nil {
			Walk(v, n.Suppress)
		}
		for _, r := range n.Rules {
			Walk(v, r)
		}
		if n.Into != nil {
			Walk(v, n.Into)
		}
	case *CreateFunction:
		Walk(v, n.Name)
		if n.Signature != nil {
			Walk(v, n.Signature)
		}
		for _, r := range n.Using {
			Walk(v, r)
		}
	case *FunctionSignature:
		for _, c := range n.Params {
			Walk(v, c)
		}
		walkType(v, n.Returns)
		for _, c := range n.ReturnsTable {
			Walk(v, c)
		}
	case *FunctionResource:
	case *Set, *Reset, *Show:
	case *Insert:
		Walk(v, n.Table)
		walkHints(v, n.TableHints)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *StatementSet:
		for _, s := range n.Inserts {
			Walk(v, s)
		}
	case *Explain:
		if n.Stmt != nil {
			Walk(v, n.Stmt)
		}
	case *Describe:
		Walk(v, n.Name)
	case *QueryStmt:
		walkQuery(v, n.Query)

	// Queries.
	case *Query:
		for _, c := range n.With {
			Walk(v, c)
		}
		if n.Body != nil {
			Walk(v, n.Body)
		}
		for _, o := range n.OrderBy {
			Walk(v, o)
		}
		walkExpr(v, n.Limit)
		walkExpr(v, n.Offset)
	case *CTE:
		Walk(v, n.Name)
		walkIdents(v, n.Columns)
		walkQuery(v, n.Query)
	case *Select:
		walkHints(v, n.Hints)
		for _, it := range n.Items {
			Walk(v, it)
		}
		if n.From != nil {
			Walk(v, n.From)
		}
		walkExpr(v, n.Where)
		walkExprs(v, n.GroupBy)
		walkExpr(v, n.Having)
		for _, w := range n.Windows {
			Walk(v, w)
		}
	case *SelectItem:
		walkName(v, n.Qualifier)
		walkExpr(v, n.Expr)
		walkIdent(v, n.Alias)
	case *SetOp:
		Walk(v, n.Left)
		Walk(v, n.Right)
	case *Values:
		for _, row := range n.Rows {
			walkExprs(v, row)
		}
	case *OrderItem:
		walkExpr(v, n.Expr)
	case *NamedWindow:
		Walk(v, n.Name)
		if n.Spec != nil {
			Walk(v, n.Spec)
		}
	case *WindowSpec:
		walkIdent(v, n.Name)
		walkExprs(v, n.PartitionBy)
		for _, o := range n.OrderBy {
			Walk(v, o)
		}
		if n.Frame != nil {
			if n.Frame.Start != nil {
				Walk(v, n.Frame.Start)
			}
			if n.Frame.End != nil {
				Walk(v, n.Frame.End)
			}
		}
	case *FrameBound:
		walkExpr(v, n.Offset)

	// Table expressions.
	case *TableName:
		Walk(v, n.Name)
		walkHints(v, n.Hints)
		walkExpr(v, n.SystemTime)
		walkIdent(v, n.Alias)
		walkIdents(v, n.ColumnAliases)
	case *SubqueryTable:
		walkQuery(v, n.Query)
		walkIdent(v, n.Alias)
		walkIdents(v, n.ColumnAliases)
	case *Join:
		Walk(v, n.Left)
		Walk(v, n.Right)
		walkExpr(v, n.On)
		walkIdents(v, n.Using)
	case *TableFunc:
		Walk(v, n.Name)
		for _, a := range n.Args {
			Walk(v, a)
		}
		walkIdent(v, n.Alias)
		walkIdents(v, n.ColumnAliases)
	case *Unnest:
		walkExprs(v, n.Exprs)
		walkIdent(v, n.Alias)
		walkIdents(v, n.ColumnAliases)
	case *FuncArg:
		walkIdent(v, n.Name)
		walkExpr(v, n.Value)

	// Expressions.
	case *Literal, *TypedLiteral, *IntervalLit, *TimeUnit:
	case *ColumnRef:
		walkIdents(v, n.Parts)
	case *Unary:
		walkExpr(v, n.X)
	case *Binary:
		walkExpr(v, n.X)
		walkExpr(v, n.Y)
	case *IsExpr:
		walkExpr(v, n.X)
	case *Between:
		walkExpr(v, n.X)
		walkExpr(v, n.Lo)
		walkExpr(v, n.Hi)
	case *In:
		walkExpr(v, n.X)
		walkExprs(v, n.List)
		walkQuery(v, n.Query)
	case *Like:
		walkExpr(v, n.X)
		walkExpr(v, n.Pattern)
		walkExpr(v, n.Escape)
	case *Exists:
		walkQuery(v, n.Query)
	case *SubqueryExpr:
		walkQuery(v, n.Query)
	case *Case:
		walkExpr(v, n.Operand)
		for _, w := range n.Whens {
			Walk(v, w)
		}
		walkExpr(v, n.Else)
	case *When:
		walkExpr(v, n.Cond)
		walkExpr(v, n.Result)
	case *Cast:
		walkExpr(v, n.X)
		walkType(v, n.Type)
	case *Call:
		Walk(v, n.Name)
		walkExprs(v, n.Args)
		walkType(v, n.Returning)
		if n.OnEmpty != nil {
			Walk(v, n.OnEmpty)
		}
		if n.OnError != nil {
			Walk(v, n.OnError)
		}
		walkExpr(v, n.Filter)
		if n.Over != nil {
			Walk(v, n.Over)
		}
		walkIdent(v, n.OverName)
	case *JSONBehavior:
		walkExpr(v, n.Default)
	case *Index:
		walkExpr(v, n.X)
		walkExpr(v, n.Index)
	case *FieldAccess:
		walkExpr(v, n.X)
		walkIdent(v, n.Name)
	case *RowCtor:
		walkExprs(v, n.Args)
	case *ArrayCtor:
		walkExprs(v, n.Elems)
	case *MapCtor:
		walkExprs(v, n.Elems)
	case *TableArg:
		walkName(v, n.Name)
		walkExprs(v, n.PartitionBy)
		walkQuery(v, n.Query)
	case *Descriptor:
		walkIdents(v, n.Columns)
	case *GroupingSet:
		walkExprs(v, n.Items)
	default:
		// Only reachable with a node type defined outside this package.
		panic(fmt.Sprintf("ast.Walk: unexpected node type %T", n))
	}
	v.Visit(nil)
}

func walkIdent(v Visitor, x *Ident) {
	if x != nil {
		Walk(v, x)
	}
}

func walkIdents(v Visitor, list []*Ident) {
	for _, x := range list {
		Walk(v, x)
	}
}

func walkName(v Visitor, x *ObjectName) {
	if x != nil {
		Walk(v, x)
	}
}

func walkType(v Visitor, x *TypeExpr) {
	if x != nil {
		Walk(v, x)
	}
}

func walkQuery(v Visitor, x *Query) {
	if x != nil {
		Walk(v, x)
	}
}

func walkExpr(v Visitor, x Expr) {
	if x != nil {
		Walk(v, x)
	}
}

func walkExprs(v Visitor, list []Expr) {
	for _, x := range list {
		if x != nil {
			Walk(v, x)
		}
	}
}

type inspector func(Node) bool

func (f inspector) Visit(n Node) Visitor {
	if f(n) {
		return f
	}
	return nil
}

// Inspect traverses the tree rooted at n in depth-first, source order: it
// calls f(n); if f returns true, Inspect visits each non-nil child, then
// calls f(nil).
func Inspect(n Node, f func(Node) bool) {
	Walk(inspector(f), n)
}

func walkHints(v Visitor, hs []*Hint) {
	for _, h := range hs {
		Walk(v, h)
	}
}
