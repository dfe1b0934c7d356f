package planner

import (
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
)

// windowed is the window of a relation: the window its rows were assigned
// to (a window TVF) or aggregated in (a window aggregation), and the
// columns that hold its bounds.
type windowed struct {
	spec       window.Spec
	start, end int
}

// windowOf returns the window of n's rows: n is a window TVF, a window
// aggregation or a window join, or a Calc over one that keeps window_start
// and window_end as columns.
func windowOf(n plan.Node) (windowed, bool) {
	switch x := n.(type) {
	case *plan.WindowTVF:
		w := x.Out.Len()
		return windowed{spec: x.Spec, start: w - 3, end: w - 2}, true
	case *plan.WindowAggregate:
		k := len(x.Keys)
		return windowed{spec: x.Spec, start: k, end: k + 1}, true
	case *plan.WindowJoin:
		// Another window join, as in Flink: its rows are in the window of
		// the side that is never padded (none for a FULL join).
		switch x.Kind {
		case plan.InnerJoin, plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
			return windowed{spec: x.Spec, start: x.LeftStart, end: x.LeftEnd}, true
		case plan.RightJoin:
			nl := x.Left.Schema().Len()
			return windowed{spec: x.Spec, start: nl + x.RightStart, end: nl + x.RightEnd}, true
		}
	case *plan.Calc:
		in, ok := windowOf(x.Input)
		if !ok {
			return windowed{}, false
		}
		out := windowed{spec: in.spec, start: -1, end: -1}
		for i, p := range x.Projs {
			if c, ok := p.(*expr.Column); ok {
				switch {
				case c.Index == in.start && out.start < 0:
					out.start = i
				case c.Index == in.end && out.end < 0:
					out.end = i
				}
			}
		}
		return out, out.start >= 0 && out.end >= 0
	}
	return windowed{}, false
}

// windowJoin recognizes a window join: two windowed inputs whose join keys
// pair their window_start columns and their window_end columns. It takes
// those two pairs out of j's keys and returns the WindowJoin (its Join to
// be filled in), or nil for another kind of join. It refuses a join that
// pairs only one of the bounds, and windows that differ.
func (p *Planner) windowJoin(on ast.Node, j *plan.Join) (*plan.WindowJoin, error) {
	lw, lok := windowOf(j.Left)
	rw, rok := windowOf(j.Right)
	if !lok || !rok {
		return nil, nil
	}
	starts, ends := -1, -1
	for i := range j.LeftKeys {
		l, r := j.LeftKeys[i], j.RightKeys[i]
		switch {
		case l == lw.start && r == rw.start && starts < 0:
			starts = i
		case l == lw.end && r == rw.end && ends < 0:
			ends = i
		}
	}
	if starts < 0 && ends < 0 {
		return nil, nil
	}
	if starts < 0 || ends < 0 {
		has, lacks := "window_end", "window_start"
		if ends < 0 {
			has, lacks = lacks, has
		}
		return nil, p.errorf(on, "the join condition equates the two sides' %s but not their %s: a window join must equate both (l.window_start = r.window_start AND l.window_end = r.window_end)",
			has, lacks)
	}
	if lw.spec != rw.spec {
		return nil, p.errorf(on, "a window join needs the same window on both sides, but the left input has %s and the right one %s",
			lw.spec, rw.spec)
	}
	if lw.spec.Kind == window.Session {
		return nil, p.errorf(on, "window joins over SESSION windows are not supported: use TUMBLE, HOP or CUMULATE")
	}
	wj := &plan.WindowJoin{Spec: lw.spec, LeftStart: lw.start, LeftEnd: lw.end, RightStart: rw.start, RightEnd: rw.end}
	var lk, rk []int
	for i := range j.LeftKeys {
		if i != starts && i != ends {
			lk = append(lk, j.LeftKeys[i])
			rk = append(rk, j.RightKeys[i])
		}
	}
	j.LeftKeys, j.RightKeys = lk, rk
	return wj, nil
}
