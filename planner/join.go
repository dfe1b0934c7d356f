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
	cond, on, err := p.bindOn(j, lsc, rsc)
	if err != nil {
		return nil, nil, err
	}

	n := &plan.Join{Left: left, Right: right, Kind: kind, SQL: p.sqlAt(j.Kind+" JOIN", j.JoinPos)}
	rest, err := p.joinKeys(n, j.On, cond, on, nl)
	if err != nil {
		return nil, nil, err
	}
	// Equal windows make it a window join; bounds between the event times
	// of append-only inputs an interval join. The watermark cleans both.
	wj, err := p.windowJoin(j.On, n)
	if err != nil {
		return nil, nil, err
	}
	var ij *plan.IntervalJoin
	if wj == nil && !left.Updating() && !right.Updating() {
		ij, rest = intervalBounds(rest, nl)
	}
	if ij == nil && wj == nil {
		if err := p.refuseProctimeCondition(j, n, rest, on, nl); err != nil {
			return nil, nil, err
		}
	}
	if err := p.joinResidual(n, j.On, rest); err != nil {
		return nil, nil, err
	}

	// The output: the left columns, then the right ones; the side an
	// outer join pads may be NULL. Time attributes become plain
	// timestamps, as in Flink: a join's output has no watermark.
	// An interval join keeps its time columns as event times.
	outScope := &scope{}
	for i, c := range on.cols {
		pad := i < nl && (kind == plan.RightJoin || kind == plan.FullJoin) ||
			i >= nl && (kind == plan.LeftJoin || kind == plan.FullJoin)
		if pad {
			c.typ = c.typ.WithNullable(true)
		}
		if ij == nil || i != ij.LeftTime && i != nl+ij.RightTime {
			c.typ = c.typ.WithoutTimeAttr()
		}
		outScope.cols = append(outScope.cols, c)
		n.Out.Columns = append(n.Out.Columns, types.Column{Name: c.name, Type: c.typ})
	}
	if ij != nil {
		ij.Join = *n
		return ij, outScope, nil
	}
	if wj != nil {
		wj.Join = *n
		return wj, outScope, nil
	}
	return n, outScope, nil
}

// joinKeys sets the keys of n from the equalities between a column of
// each side among the conjuncts of cond (bound over on, whose first nl
// columns are the left side's), and returns the other conjuncts.
func (p *Planner) joinKeys(n *plan.Join, at ast.Node, cond expr.Node, on *scope, nl int) ([]expr.Node, error) {
	var rest []expr.Node
	for _, c := range expr.Conjuncts(cond) {
		l, r, ok := equiKey(c, nl)
		if !ok {
			rest = append(rest, c)
			continue
		}
		lt, rt := on.cols[l].typ, on.cols[r].typ
		if types.KeyKind(lt.Kind) != types.KeyKind(rt.Kind) {
			return nil, p.errorf(at, "join keys %s (%s) and %s (%s) have different types: CAST one to the other's",
				on.cols[l].name, lt.WithNullable(true), on.cols[r].name, rt.WithNullable(true))
		}
		n.LeftKeys = append(n.LeftKeys, l)
		n.RightKeys = append(n.RightKeys, r-nl)
	}
	if len(n.LeftKeys) == 0 {
		return nil, p.errorf(at, "the join condition has no equality between a column of each side (a.x = b.y): streams are joined on keys")
	}
	return rest, nil
}

// refuseProctimeCondition refuses a regular join whose condition (its
// keys or the rest of ON) reads a processing-time attribute. Flink plans
// `b.pt BETWEEN a.pt - INTERVAL ... AND a.pt` over PROCTIME() columns as
// a processing-time interval join, each row's time fixed as it arrives
// and state cleaned as the clock passes; Sluice has no such join, and a
// regular join would compare the times when the condition is evaluated,
// giving different rows from run to run.
func (p *Planner) refuseProctimeCondition(j *ast.Join, n *plan.Join, rest []expr.Node, on *scope, nl int) error {
	cols := append([]int(nil), n.LeftKeys...)
	for _, r := range n.RightKeys {
		cols = append(cols, nl+r)
	}
	for _, c := range rest {
		cols = append(cols, expr.Columns(c)...)
	}
	for _, i := range cols {
		if c := on.cols[i]; c.typ.TimeAttr == types.ProcTime {
			name := c.name
			if c.qual != "" {
				name = c.qual + "." + c.name
			}
			return p.errorf(j.On, "a join condition over the processing-time attribute %s is not supported: "+
				"Flink runs it as a processing-time interval join, which Sluice does not have, and a regular join would "+
				"compare times as it evaluates the condition, giving different rows from run to run; "+
				"bound event times instead (columns with a WATERMARK: b.ts BETWEEN a.ts - INTERVAL '5' MINUTE AND a.ts), "+
				"or look the other table up as it is now (JOIN t FOR SYSTEM_TIME AS OF a.pt)", name)
		}
	}
	return nil
}

// joinResidual sets the residual condition of n: the AND of rest.
func (p *Planner) joinResidual(n *plan.Join, at ast.Node, rest []expr.Node) error {
	for _, c := range rest {
		var err error
		if n.Residual == nil {
			n.Residual = c
		} else if n.Residual, err = p.builder.Call("AND", n.Residual, c); err != nil {
			return p.errorf(at, "%s", err.Error())
		}
	}
	return nil
}

// intervalBounds finds, among the conditions of a join, a lower and an
// upper bound of left.time - right.time between two event-time columns,
// and returns them as an IntervalJoin (its Join to be filled in) with the
// conditions left over; or nil and the conditions unchanged.
func intervalBounds(conds []expr.Node, nl int) (*plan.IntervalJoin, []expr.Node) {
	var lower, upper *int64
	lt, rt := -1, -1
	var rest []expr.Node
	for _, c := range conds {
		var bounds []timeBound
		if call, ok := c.(*expr.Call); ok && call.Name == "BETWEEN" && len(call.Args) == 3 {
			a, ok1 := compareBound(">=", call.Args[0], call.Args[1], nl)
			b, ok2 := compareBound("<=", call.Args[0], call.Args[2], nl)
			if ok1 && ok2 {
				bounds = []timeBound{a, b}
			}
		} else if ok && len(call.Args) == 2 {
			if b, ok := compareBound(call.Name, call.Args[0], call.Args[1], nl); ok {
				bounds = []timeBound{b}
			}
		}
		if bounds == nil {
			rest = append(rest, c)
			continue
		}
		consistent := true
		for _, b := range bounds {
			if lt >= 0 && (b.left != lt || b.right != rt) {
				consistent = false
			}
		}
		if !consistent {
			rest = append(rest, c)
			continue
		}
		for _, b := range bounds {
			lt, rt = b.left, b.right
			v := b.v
			if b.lower {
				if lower == nil || v > *lower {
					lower = &v
				}
			} else if upper == nil || v < *upper {
				upper = &v
			}
		}
	}
	if lower == nil || upper == nil {
		return nil, conds
	}
	return &plan.IntervalJoin{LeftTime: lt, RightTime: rt - nl, Lower: *lower, Upper: *upper}, rest
}

// timeBound is `left.time - right.time >= v` (lower) or `<= v`.
type timeBound struct {
	left, right int
	lower       bool
	v           int64
}

// compareBound reads `a op b` as a bound of left.time - right.time, where
// a and b are an event-time column of each side, each plus or minus a
// constant interval.
func compareBound(op string, a, b expr.Node, nl int) (timeBound, bool) {
	ca, oa, ok1 := timeExpr(a)
	cb, ob, ok2 := timeExpr(b)
	if !ok1 || !ok2 || (ca < nl) == (cb < nl) {
		return timeBound{}, false
	}
	// a op b, i.e. ca + oa op cb + ob.
	v := ob - oa
	if ca >= nl { // the right side first: flip to left op' right
		ca, cb, v = cb, ca, -v
		op = map[string]string{">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op]
	}
	tb := timeBound{left: ca, right: cb}
	switch op {
	case ">=":
		tb.lower, tb.v = true, v
	case ">":
		tb.lower, tb.v = true, v+1
	case "<=":
		tb.v = v
	case "<":
		tb.v = v - 1
	default:
		return timeBound{}, false
	}
	return tb, true
}

// timeExpr reads n as an event-time column plus a constant interval (in
// microseconds).
func timeExpr(n expr.Node) (col int, off int64, ok bool) {
	switch x := n.(type) {
	case *expr.Column:
		return x.Index, 0, x.T.TimeAttr == types.RowTime
	case *expr.Cast:
		if k := x.T.Kind; k == types.KindTimestamp || k == types.KindTimestampLTZ {
			return timeExpr(x.X)
		}
	case *expr.Call:
		if (x.Name != "+" && x.Name != "-") || len(x.Args) != 2 {
			return 0, 0, false
		}
		iv := func(n expr.Node) (int64, bool) {
			l, ok := n.(*expr.Literal)
			if !ok || l.T.Kind != types.KindIntervalDayTime || l.V.IsNull() {
				return 0, false
			}
			return l.V.Int(), true
		}
		if c, o, ok := timeExpr(x.Args[0]); ok {
			if d, ok := iv(x.Args[1]); ok {
				if x.Name == "-" {
					d = -d
				}
				return c, o + d, true
			}
		}
		if x.Name == "+" {
			if c, o, ok := timeExpr(x.Args[1]); ok {
				if d, ok := iv(x.Args[0]); ok {
					return c, o + d, true
				}
			}
		}
	}
	return 0, 0, false
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

// bindOn binds the ON condition of join j over the columns of its left
// side then its right side, and returns it with that scope; it must be
// BOOLEAN.
func (p *Planner) bindOn(j *ast.Join, lsc, rsc *scope) (expr.Node, *scope, error) {
	on := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)}
	cond, err := (&binder{p: p, sc: on}).bind(j.On)
	if err != nil {
		return nil, nil, err
	}
	if k := cond.Type().Kind; k != types.KindBoolean && k != types.KindNull {
		return nil, nil, p.errorf(j.On, "the ON condition must be BOOLEAN, not %s", cond.Type())
	}
	return cond, on, nil
}
