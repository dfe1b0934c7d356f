package planner

import (
	"slices"

	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// windowProps are the window properties of rows that carry their window,
// as Flink's RelWindowProperties: the window the rows were assigned to
// (a window TVF) or aggregated, ranked or joined in, and the columns that
// hold its bounds and its window_time. A column may be copied: an inner
// window join has the bounds of both sides.
type windowProps struct {
	spec                window.Spec
	starts, ends, times []int
	// tvf says the rows are a window TVF's: an input row in each of its
	// windows, not yet aggregated.
	tvf bool
	// timeType is the type of window_time where the window was made, a
	// time attribute: processing time or event time.
	timeType types.Type
}

// proctime says the windows are of processing time.
func (wp windowProps) proctime() bool { return wp.timeType.TimeAttr == types.ProcTime }

// windowPropsOf returns the window properties of n's rows when n is a
// window TVF, a window aggregation, a window Top-N or a window join, or a
// Calc over one that passes window_start and window_end on as columns.
// ok is false when the rows carry no window (or not both bounds).
func windowPropsOf(n plan.Node) (wp windowProps, ok bool) {
	switch x := n.(type) {
	case *plan.WindowTVF:
		w := x.Input.Schema().Len()
		return windowProps{spec: x.Spec, starts: []int{w}, ends: []int{w + 1}, times: []int{w + 2}, tvf: true,
			timeType: x.Out.Columns[w+2].Type}, true
	case *plan.WindowAggregate:
		k := len(x.Keys)
		return windowProps{spec: x.Spec, starts: []int{k}, ends: []int{k + 1}, times: []int{k + 2},
			timeType: x.Out.Columns[k+2].Type}, true
	case *plan.WindowRank:
		return windowPropsOf(x.Input)
	case *plan.WindowJoin:
		// As in Flink, the rows of a window join are in the window of a
		// side that is never padded (none for a FULL join).
		nl := x.Left.Schema().Len()
		lp, _ := windowPropsOf(x.Left)
		rp, _ := windowPropsOf(x.Right)
		left := windowProps{spec: x.Spec, starts: []int{x.LeftStart}, ends: []int{x.LeftEnd}, times: lp.times, timeType: lp.timeType}
		right := windowProps{spec: x.Spec, starts: []int{nl + x.RightStart}, ends: []int{nl + x.RightEnd}, timeType: rp.timeType}
		for _, t := range rp.times {
			right.times = append(right.times, nl+t)
		}
		switch x.Kind {
		case plan.InnerJoin:
			left.starts = append(left.starts, right.starts...)
			left.ends = append(left.ends, right.ends...)
			left.times = append(slices.Clone(left.times), right.times...)
			return left, true
		case plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
			return left, true
		case plan.RightJoin:
			return right, true
		}
	case *plan.Calc:
		in, ok := windowPropsOf(x.Input)
		if !ok {
			return in, false
		}
		out := windowProps{spec: in.spec, tvf: in.tvf, timeType: in.timeType}
		for i, p := range x.Projs {
			if c, ok := p.(*expr.Column); ok {
				switch {
				case slices.Contains(in.starts, c.Index):
					out.starts = append(out.starts, i)
				case slices.Contains(in.ends, c.Index):
					out.ends = append(out.ends, i)
				case slices.Contains(in.times, c.Index):
					out.times = append(out.times, i)
				}
			}
		}
		return out, len(out.starts) > 0 && len(out.ends) > 0
	}
	return windowProps{}, false
}

// attaches reports whether a GROUP BY of the bounds of these rows is a
// window aggregation of the windows the rows carry: Flink's
// window-attached windowing takes event-time windows, and processing-time
// ones straight from a window TVF (whose rows are each in their windows
// still).
func (wp windowProps) attaches() bool { return !wp.proctime() || wp.tvf }

// attachedDistinct returns the window aggregation of the windows that the
// rows of in carry, grouped by the input columns keys besides the bounds,
// for the DISTINCT of all its columns: nil when in carries no window.
// The Calc over it gives the columns back in their order.
func attachedDistinct(in plan.Node) plan.Node {
	wp, ok := windowPropsOf(in)
	if !ok || !wp.attaches() {
		return nil
	}
	s := in.Schema()
	w := &plan.WindowAggregate{Input: in, Spec: wp.spec, TimeCol: -1, Attached: true, StartCol: wp.starts[0], EndCol: wp.ends[0]}
	for i, c := range s.Columns {
		if !slices.Contains(wp.starts, i) && !slices.Contains(wp.ends, i) && !slices.Contains(wp.times, i) {
			w.Keys = append(w.Keys, i)
			w.Out.Columns = append(w.Out.Columns, types.Column{Name: c.Name, Type: c.Type.WithoutTimeAttr()})
		}
	}
	k := len(w.Keys)
	w.Out.Columns = append(w.Out.Columns, attachedWindowColumns(wp)...)
	projs := make([]expr.Node, s.Len())
	key := 0
	for i := range s.Columns {
		at := k + 2
		switch {
		case slices.Contains(wp.starts, i):
			at = k
		case slices.Contains(wp.ends, i):
			at = k + 1
		case !slices.Contains(wp.times, i):
			at = key
			key++
		}
		projs[i] = &expr.Column{Index: at, Name: s.Columns[i].Name, T: w.Out.Columns[at].Type}
	}
	return &plan.Calc{Input: w, Projs: projs, Out: makeSchema(projs, s.Names())}
}

// attachedWindowColumns are window_start, window_end and window_time of a
// window aggregation of rows with these window properties: window_time is
// of the type of the windows' own, a time attribute.
func attachedWindowColumns(wp windowProps) []types.Column {
	ts := types.Timestamp(3).WithNullable(false)
	return []types.Column{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts},
		{Name: "window_time", Type: wp.timeType.WithNullable(false)}}
}

// attachedGroup is a GROUP BY that groups rows that carry their window by
// the window's bounds (a cascaded window aggregation): which GROUP BY
// items are the bounds, and where the aggregation reads them.
type attachedGroup struct {
	wp    windowProps
	items map[int]int    // GROUP BY item → boundStart, boundEnd or boundTime
	texts map[string]int // a bound's expression text → the same
	// start and end are the pre-projection columns of window_start and
	// window_end, which keep the names of the columns they read.
	start, end         int
	startName, endName string
}

// Window bounds among the GROUP BY items, in the order of their output
// columns after the keys.
const (
	boundStart = iota
	boundEnd
	boundTime
)

// attachedGrouping returns the attached windowing of a GROUP BY of in by
// nodes (the bound items; nil for none), as Flink's: when in carries its
// window and the items include a column of its window_start and one of
// its window_end. A bound that a grouping set leaves out is no bound (a
// plain key), as Flink's Expand loses it; nil when the GROUP BY is not a
// window aggregation.
func attachedGrouping(in plan.Node, nodes []expr.Node, gs *groupSets) *attachedGroup {
	wp, ok := windowPropsOf(in)
	if !ok || !wp.attaches() {
		return nil
	}
	g := &attachedGroup{wp: wp, items: map[int]int{}, texts: map[string]int{}, start: -1, end: -1}
	var start, end bool
	for i, n := range nodes {
		c, ok := n.(*expr.Column)
		if !ok || gs != nil && !gs.inAll(i) {
			continue
		}
		switch {
		case slices.Contains(wp.starts, c.Index):
			g.items[i], start = boundStart, true
		case slices.Contains(wp.ends, c.Index):
			g.items[i], end = boundEnd, true
		case slices.Contains(wp.times, c.Index):
			g.items[i] = boundTime
		}
	}
	if !start || !end {
		return nil
	}
	return g
}

// bound takes GROUP BY item i, bound as n, if it is a window bound, and
// reports whether it was: the bounds are the window, not keys.
func (g *attachedGroup) bound(ac *aggCollector, i int, n expr.Node) bool {
	b, ok := g.items[i]
	if !ok {
		return false
	}
	g.texts[exprKey(n)] = b
	switch name := n.(*expr.Column).Name; {
	case b == boundStart && g.start < 0:
		g.start, g.startName = ac.preCol(n), name
	case b == boundEnd && g.end < 0:
		g.end, g.endName = ac.preCol(n), name
	}
	return true
}
