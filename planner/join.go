package planner

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// bindJoin plans a regular join: `l [INNER | LEFT | RIGHT | FULL] JOIN r ON
// cond`. The equalities of cond between a column of each side are the
// join's keys; the rest of cond is checked on each matching pair.
func (p *Planner) bindJoin(j *ast.Join) (plan.Node, *scope, error) {
	var kind plan.JoinKind
	switch j.Kind {
	case "INNER":
		kind = plan.InnerJoin
	case "LEFT":
		kind = plan.LeftJoin
	case "RIGHT":
		kind = plan.RightJoin
	case "FULL":
		kind = plan.FullJoin
	case "CROSS", "COMMA":
		return nil, nil, p.errorf(j, "a join of two tables needs an equality between them: write JOIN ... ON a.x = b.y (cross joins of streams are not supported)")
	default:
		return nil, nil, p.errorf(j, "%s JOIN is not supported", j.Kind)
	}
	if j.Natural {
		return nil, nil, p.errorf(j, "NATURAL JOIN is not supported; write JOIN ... ON")
	}
	if len(j.Using) > 0 {
		return nil, nil, p.errorf(j.Using[0], "JOIN ... USING is not supported yet; write JOIN ... ON")
	}
	if j.On == nil {
		return nil, nil, p.errorf(j, "%s JOIN needs ON with an equality between the two sides", j.Kind)
	}
	left, lsc, err := p.bindFrom(j.Left)
	if err != nil {
		return nil, nil, err
	}
	right, rsc, err := p.bindFrom(j.Right)
	if err != nil {
		return nil, nil, err
	}
	nl := len(lsc.cols)
	on := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)}
	b := &binder{p: p, sc: on}
	cond, err := b.bind(j.On)
	if err != nil {
		return nil, nil, err
	}
	if k := cond.Type().Kind; k != types.KindBoolean && k != types.KindNull {
		return nil, nil, p.errorf(j.On, "the ON condition must be BOOLEAN, not %s", cond.Type())
	}

	n := &plan.Join{Left: left, Right: right, Kind: kind}
	var rest []expr.Node
	for _, c := range conjuncts(cond) {
		l, r, ok := equiKey(c, nl)
		if !ok {
			rest = append(rest, c)
			continue
		}
		lt, rt := on.cols[l].typ, on.cols[r].typ
		if types.KeyKind(lt.Kind) != types.KeyKind(rt.Kind) {
			return nil, nil, p.errorf(j.On, "join keys %s (%s) and %s (%s) have different types: CAST one to the other's",
				on.cols[l].name, lt.WithNullable(true), on.cols[r].name, rt.WithNullable(true))
		}
		n.LeftKeys = append(n.LeftKeys, l)
		n.RightKeys = append(n.RightKeys, r-nl)
	}
	if len(n.LeftKeys) == 0 {
		return nil, nil, p.errorf(j.On, "the ON condition has no equality between a column of each side (a.x = b.y): streams are joined on keys")
	}
	for _, c := range rest {
		if n.Residual == nil {
			n.Residual = c
		} else if n.Residual, err = p.builder.Call("AND", n.Residual, c); err != nil {
			return nil, nil, p.errorf(j.On, "%s", err.Error())
		}
	}

	// The output: the left columns, then the right ones; the side an
	// outer join pads may be NULL. Time attributes become plain
	// timestamps, as in Flink: a join's output has no watermark.
	outScope := &scope{}
	for i, c := range on.cols {
		pad := i < nl && (kind == plan.RightJoin || kind == plan.FullJoin) ||
			i >= nl && (kind == plan.LeftJoin || kind == plan.FullJoin)
		if pad {
			c.typ = c.typ.WithNullable(true)
		}
		c.typ = c.typ.WithoutTimeAttr()
		outScope.cols = append(outScope.cols, c)
		n.Out.Columns = append(n.Out.Columns, types.Column{Name: c.name, Type: c.typ})
	}
	return n, outScope, nil
}

// conjuncts splits n at its ANDs.
func conjuncts(n expr.Node) []expr.Node {
	if c, ok := n.(*expr.Call); ok && c.Name == "AND" {
		var out []expr.Node
		for _, a := range c.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []expr.Node{n}
}

// equiKey reports whether n is `column = column` with one column of each
// side (the left side's columns are those below nl), and returns them,
// left first.
func equiKey(n expr.Node, nl int) (l, r int, ok bool) {
	c, isCall := n.(*expr.Call)
	if !isCall || c.Name != "=" || len(c.Args) != 2 {
		return 0, 0, false
	}
	a, aok := c.Args[0].(*expr.Column)
	b, bok := c.Args[1].(*expr.Column)
	if !aok || !bok {
		return 0, 0, false
	}
	switch {
	case a.Index < nl && b.Index >= nl:
		return a.Index, b.Index, true
	case b.Index < nl && a.Index >= nl:
		return b.Index, a.Index, true
	}
	return 0, 0, false
}
