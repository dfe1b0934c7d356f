package planner

import (
	"strings"

	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// overCalls returns the window function calls (f(...) OVER ...) of a
// select list.
func overCalls(items []*ast.SelectItem) []*ast.Call {
	var out []*ast.Call
	visit := func(n ast.Node) bool {
		if c, ok := n.(*ast.Call); ok && (c.Over != nil || c.OverName != nil) {
			out = append(out, c)
			return false
		}
		return true
	}
	for _, it := range items {
		if it.Expr != nil {
			ast.Inspect(it.Expr, visit)
		}
	}
	return out
}

// isRowNumber reports whether the OVER calls of a select list number rows
// (a Top-N) rather than aggregate: when any of them is ROW_NUMBER(),
// RANK() or DENSE_RANK().
func isRowNumber(calls []*ast.Call) bool {
	for _, c := range calls {
		if _, ok := rankFuncs[strings.ToUpper(c.Name.Last().Name)]; ok {
			return true
		}
	}
	return false
}

// bindRank plans the ROW_NUMBER(), RANK() or DENSE_RANK() OVER
// (PARTITION BY ... ORDER BY ...) of a select list over in: a Rank (a
// WindowRank over windowed rows, see windowRank) whose number the select
// list reads. The enclosing query must bound the number (Top-N,
// deduplication); the optimizer moves that bound into the Rank.
func (p *Planner) bindRank(calls []*ast.Call, specs map[*ast.Call]*ast.WindowSpec, in plan.Node, sc *scope) (plan.Node, *scope, map[*ast.Call]int, error) {
	first := calls[0]
	fname := strings.ToUpper(first.Name.Last().Name)
	for _, c := range calls {
		name := strings.ToUpper(c.Name.Last().Name)
		if _, ok := rankFuncs[name]; !ok {
			return nil, nil, nil, p.errorf(c, "%s OVER cannot be combined with %s() OVER in one SELECT: "+
				"compute the OVER aggregation in a subquery", name, fname)
		}
		if len(c.Args) > 0 {
			return nil, nil, nil, p.errorf(c.Args[0], "%s takes no arguments", name)
		}
		if name != fname || ast.Format(specs[c]) != ast.Format(specs[first]) {
			return nil, nil, nil, p.errorf(c, "all ranking functions of a query must be the same function with the same OVER (...)")
		}
	}
	spec := specs[first]
	if spec.Frame != nil {
		return nil, nil, nil, p.errorf(spec, "%s() takes no window frame", fname)
	}
	if len(spec.OrderBy) == 0 {
		return nil, nil, nil, p.errorf(spec, "%s() needs ORDER BY in its OVER (...)", fname)
	}
	column := func(e ast.Expr, what string) (int, error) {
		n, err := p.bindExpr(e, sc)
		if err != nil {
			return 0, err
		}
		c, ok := n.(*expr.Column)
		if !ok {
			return 0, p.errorf(e, "%s of %s() takes columns: compute '%s' in a subquery", what, fname, ast.Format(e))
		}
		return c.Index, nil
	}
	r := &plan.Rank{Input: in, Type: rankFuncs[fname]}
	if p.File != nil {
		r.At = p.File.Position(first.Pos())
	}
	for _, e := range spec.PartitionBy {
		i, err := column(e, "PARTITION BY")
		if err != nil {
			return nil, nil, nil, err
		}
		r.Partition = append(r.Partition, i)
	}
	procAsc := true
	for _, o := range spec.OrderBy {
		i, err := column(o.Expr, "ORDER BY")
		if err != nil {
			return nil, nil, nil, err
		}
		k := plan.SortKey{Col: i, Desc: o.Desc, NullsFirst: !o.Desc}
		if o.NullsFirst != nil {
			k.NullsFirst = *o.NullsFirst
		}
		r.Order = append(r.Order, k)
		procAsc = procAsc && !o.Desc && sc.cols[i].typ.TimeAttr == types.ProcTime
	}
	// Keeping the first row by processing time never replaces it.
	r.AppendOnly = procAsc && !in.Updating() && r.Type == plan.RowNumberRank

	out := &scope{}
	for _, c := range sc.cols {
		c.typ = c.typ.WithoutTimeAttr()
		out.cols = append(out.cols, c)
		r.Out.Columns = append(r.Out.Columns, types.Column{Name: c.name, Type: c.typ})
	}
	rn := len(out.cols)
	num := types.BigInt.WithNullable(false)
	out.cols = append(out.cols, scopeCol{name: "$rownum", typ: num, hidden: true})
	r.Out.Columns = append(r.Out.Columns, types.Column{Name: "$rownum", Type: num})
	over := map[*ast.Call]int{}
	for _, c := range calls {
		over[c] = rn
	}
	if w := windowRank(r, out); w != nil {
		return w, out, over, nil
	}
	return r, out, over, nil
}
