package planner

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// Subqueries in WHERE: a condition `x [NOT] IN (SELECT y FROM ... WHERE
// ...)` or `[NOT] EXISTS (SELECT ... FROM ... WHERE ...)`, one of the
// conditions joined by AND, is decorrelated into a SEMI (ANTI) join of the
// query's FROM with the subquery's: the subquery's conditions that equate
// a column of each side are the join's keys (with x = y for IN), those on
// its own columns filter its rows, and the rest are checked on each pair.
// When both sides are windowed alike and correlated on window_start and
// window_end, it is a window join; else a regular (updating) join, which
// needs a key.

// visible reports whether a column reference resolves in s (or is an
// error there, which s reports): else a subquery's binder looks for it in
// the enclosing query.
func (p *Planner) visible(s *scope, parts []*ast.Ident) bool {
	if len(parts) >= 2 {
		if _, ok, err := p.find(s, parts[0].Name, parts[1]); ok || err != nil {
			return true
		}
		if p.hasQualifier(s, parts[0].Name) {
			return true
		}
	}
	_, ok, err := p.find(s, "", parts[0])
	return ok || err != nil
}

// conjuncts splits a condition at its top-level ANDs.
func conjuncts(e ast.Expr) []ast.Expr {
	if b, ok := e.(*ast.Binary); ok && b.Op == "AND" {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	return []ast.Expr{e}
}

// subqueryCond returns the subquery of a condition that is [NOT] EXISTS
// (query) or x [NOT] IN (query), whether it is negated, and x for IN.
func subqueryCond(e ast.Expr) (q *ast.Query, not bool, x ast.Expr) {
	if u, ok := e.(*ast.Unary); ok && u.Op == "NOT" {
		q, not, x = subqueryCond(u.X)
		return q, !not, x
	}
	switch c := e.(type) {
	case *ast.Exists:
		return c.Query, false, nil
	case *ast.In:
		if c.Query != nil {
			return c.Query, c.Not, c.X
		}
	}
	return nil, false, nil
}

// hasSubqueryCond reports whether a WHERE condition has a conjunct that is
// an IN or EXISTS subquery.
func hasSubqueryCond(where ast.Expr) bool {
	for _, c := range conjuncts(where) {
		if q, _, _ := subqueryCond(c); q != nil {
			return true
		}
	}
	return false
}

// bindSubqueryConds joins in with the IN and EXISTS subqueries among the
// conditions of sel's WHERE, and returns the joined input, its scope, and
// sel with the conditions left over.
func (p *Planner) bindSubqueryConds(sel *ast.Select, in plan.Node, sc *scope) (plan.Node, *scope, *ast.Select, error) {
	var rest ast.Expr
	var subs []ast.Expr
	for _, c := range conjuncts(sel.Where) {
		if q, _, _ := subqueryCond(c); q != nil {
			subs = append(subs, c)
			continue
		}
		if rest == nil {
			rest = c
		} else {
			rest = &ast.Binary{X: rest, OpPos: c.Pos(), Op: "AND", Y: c}
		}
	}
	// The other conditions filter the rows first.
	if rest != nil {
		filter, err := p.bindCondition(rest, sc, "WHERE")
		if err != nil {
			return nil, nil, nil, err
		}
		in = &plan.Calc{Input: in, Filter: filter, Projs: identity(in.Schema()), Out: in.Schema()}
	}
	for _, c := range subs {
		var err error
		if in, err = p.bindSemiJoin(c, in, sc); err != nil {
			return nil, nil, nil, err
		}
	}
	// The output: the outer rows, which are no longer time attributes
	// (a window join's output has none).
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for i := range out.cols {
		out.cols[i].typ = out.cols[i].typ.WithoutTimeAttr()
	}
	s := *sel
	s.Where = nil
	return in, out, &s, nil
}

// bindSemiJoin plans one IN or EXISTS condition as a SEMI or ANTI window
// join of left (whose scope is lsc) with the subquery.
func (p *Planner) bindSemiJoin(cond ast.Expr, left plan.Node, lsc *scope) (plan.Node, error) {
	q, not, x := subqueryCond(cond)
	what := "EXISTS"
	if x != nil {
		what = "IN"
	}
	plain := len(q.With) == 0 && len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil
	var (
		right plan.Node
		rsc   *scope
		err   error
		// yOf binds the subquery's column of IN.
		yOf func() (expr.Node, ast.Node, error)
	)
	sel, ok := q.Body.(*ast.Select)
	if so, isSet := q.Body.(*ast.SetOp); isSet && x != nil && plain {
		// IN of an uncorrelated set operation: its rows, joined on their
		// one column.
		if right, rsc, err = p.bindSetOp(so); err != nil {
			if ref := p.outerRef(so, lsc); ref != nil {
				return nil, p.errorf(ref, "the inputs of a set operation in IN cannot refer to the enclosing query: %s is one of its columns", ast.Format(ref))
			}
			return nil, err
		}
		if n := right.Schema().Len(); n != 1 {
			return nil, p.errorf(q, "the subquery of IN must select exactly one column, but this %s has %d", so.Op, n)
		}
		sel = &ast.Select{}
		yOf = func() (expr.Node, ast.Node, error) {
			c := right.Schema().Columns[0]
			return &expr.Column{Index: 0, Name: c.Name, T: c.Type}, q, nil
		}
	} else {
		if !ok || !plain || sel.From == nil ||
			len(sel.GroupBy) > 0 || sel.Having != nil || p.hasAggregate(sel) || len(sel.Windows) > 0 {
			return nil, p.errorf(q, "%s supports a subquery of the form SELECT ... FROM ... [WHERE ...] (no GROUP BY, aggregates, ORDER BY or LIMIT), or for IN a set operation of such queries", what)
		}
		if right, rsc, err = p.bindFrom(sel.From); err != nil {
			return nil, err
		}
		yOf = func() (expr.Node, ast.Node, error) {
			if len(sel.Items) != 1 || sel.Items[0].Star {
				return nil, nil, p.errorf(q, "the subquery of IN must select exactly one column")
			}
			ye, err := p.bindExpr(sel.Items[0].Expr, rsc)
			return ye, sel.Items[0].Expr, err
		}
	}
	// The left rows may be wider than lsc (a column computed for an
	// earlier IN): pairs put the right columns after all of them.
	nl := left.Schema().Len()
	j := &plan.Join{Left: left, Kind: plan.SemiJoin, SQL: p.sqlAt(what, cond.Pos())}
	if not {
		j.Kind = plan.AntiJoin
		j.SQL.What = "NOT " + what
	}

	// IN: x = the subquery's single column, a key.
	var inKeys [2]int
	if x != nil {
		ye, yAt, err := yOf()
		if err != nil {
			return nil, err
		}
		xe, err := p.bindExpr(x, lsc)
		if err != nil {
			return nil, err
		}
		xt, yt := xe.Type(), ye.Type()
		if types.KeyKind(xt.Kind) != types.KeyKind(yt.Kind) {
			return nil, p.errorf(cond, "IN compares %s with a subquery of %s: CAST one to the other's type", xt.WithNullable(true), yt.WithNullable(true))
		}
		// x NOT IN (SELECT y ...) is false when some y equals x, and
		// unknown when x or some y is NULL: a row stays only if no y
		// matches it that way. Over nullable columns it is Flink's
		// null-aware ANTI join, whose pair comes after the other keys.
		j.NullAware = not && (xt.Nullable() || yt.Nullable())
		var lk, rk int
		if left, lk = appendColumn(left, xe, "$in"); lk < 0 {
			return nil, p.errorf(x, "cannot compute the IN operand")
		}
		j.Left = left
		if right, rk = appendColumn(right, ye, "$in"); rk < 0 {
			return nil, p.errorf(yAt, "cannot compute the IN subquery's column")
		}
		inKeys = [2]int{lk, rk}
		if !j.NullAware {
			j.LeftKeys, j.RightKeys = []int{lk}, []int{rk}
		}
		nl = left.Schema().Len()
	}

	// The subquery's conditions: on its own rows, a filter; between a
	// column of each side, a key; else a condition on each pair (over
	// the left columns then the right ones).
	var filter, residual expr.Node
	and := func(a, b expr.Node) (expr.Node, error) {
		if a == nil {
			return b, nil
		}
		out, err := p.builder.Call("AND", a, b)
		return out, p.wrap(sel.Where, err)
	}
	if sel.Where != nil {
		b := &binder{p: p, sc: rsc, outer: lsc}
		// Subquery columns are [0, len(rsc.cols)), outer ones follow.
		inner := len(rsc.cols)
		for _, c := range conjuncts(sel.Where) {
			if q2, _, _ := subqueryCond(c); q2 != nil {
				return nil, p.errorf(c, "subqueries nested in a subquery's WHERE are not supported")
			}
			n, err := b.bind(c)
			if err != nil {
				return nil, err
			}
			if k := n.Type().Kind; k != types.KindBoolean && k != types.KindNull {
				return nil, p.errorf(c, "WHERE condition must be BOOLEAN, but is %s", n.Type())
			}
			cols := expr.Columns(n)
			if len(cols) == 0 || cols[len(cols)-1] < inner {
				if filter, err = and(filter, n); err != nil {
					return nil, err
				}
				continue
			}
			if r, l, ok := equiKey(n, inner); ok {
				lt, rt := lsc.cols[l-inner].typ, rsc.cols[r].typ
				if types.KeyKind(lt.Kind) != types.KeyKind(rt.Kind) {
					return nil, p.errorf(c, "%s (%s) and %s (%s) have different types: CAST one to the other's",
						lsc.cols[l-inner].name, lt.WithNullable(true), rsc.cols[r].name, rt.WithNullable(true))
				}
				j.LeftKeys = append(j.LeftKeys, l-inner)
				j.RightKeys = append(j.RightKeys, r)
				continue
			}
			pair := expr.MapColumns(n, func(col *expr.Column) expr.Node {
				y := *col
				if y.Index < inner {
					y.Index += nl
				} else {
					y.Index -= inner
				}
				return &y
			})
			if residual, err = and(residual, pair); err != nil {
				return nil, err
			}
		}
	}
	if j.NullAware {
		j.LeftKeys = append(j.LeftKeys, inKeys[0])
		j.RightKeys = append(j.RightKeys, inKeys[1])
	}
	if filter != nil {
		right = &plan.Calc{Input: right, Filter: filter, Projs: identity(right.Schema()), Out: right.Schema()}
	}
	j.Right = right
	j.Residual = residual
	for _, c := range left.Schema().Columns {
		j.Out.Columns = append(j.Out.Columns, types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()})
	}
	wj, err := p.windowJoin(cond, j)
	if err != nil {
		return nil, err
	}
	if wj != nil {
		wj.Join = *j
		return wj, nil
	}
	// A regular SEMI or ANTI join: updating, as in Flink.
	if len(j.LeftKeys) == 0 {
		return nil, p.errorf(cond, "%s with a subquery needs an equality between a column of the subquery and one of the enclosing query (streams are joined on keys)", what)
	}
	return j, nil
}

// outerRef returns a column reference of the set operation so that names
// a column of the enclosing query's scope sc with its qualifier, or nil.
func (p *Planner) outerRef(so *ast.SetOp, sc *scope) *ast.ColumnRef {
	var found *ast.ColumnRef
	ast.Inspect(so, func(n ast.Node) bool {
		if c, ok := n.(*ast.ColumnRef); ok && found == nil && len(c.Parts) >= 2 {
			if _, ok, _ := p.find(sc, c.Parts[0].Name, c.Parts[1]); ok {
				found = c
			}
		}
		return found == nil
	})
	return found
}

// appendColumn returns n with the value of e (over n's row) as a last
// column, and that column's index; or n itself when e is a column of it.
func appendColumn(n plan.Node, e expr.Node, name string) (plan.Node, int) {
	if c, ok := e.(*expr.Column); ok {
		return n, c.Index
	}
	s := n.Schema()
	projs := append(identity(s), e)
	out := types.Schema{Columns: append(append([]types.Column(nil), s.Columns...), types.Column{Name: name, Type: e.Type()})}
	return &plan.Calc{Input: n, Projs: projs, Out: out}, s.Len()
}
