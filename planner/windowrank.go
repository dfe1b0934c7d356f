package planner

import (
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// rankFuncs are the ranking functions a Top-N may number rows with.
var rankFuncs = map[string]plan.RankType{
	"ROW_NUMBER": plan.RowNumberRank,
	"RANK":       plan.StandardRank,
	"DENSE_RANK": plan.DenseRank,
}

// windowCols locates the window bounds of windowed rows among the columns
// of a plan node.
type windowCols struct {
	spec             window.Spec
	start, end, time int // -1 when the node does not pass the column on
	tvf              bool
}

// windowColsOf finds the window_start, window_end and window_time columns
// of n's rows, when n is a window TVF, a window aggregate or a window
// Top-N, or a Calc over one of them that passes the bounds on unchanged.
// ok is false when the rows carry no window (or not both bounds).
func windowColsOf(n plan.Node) (wc windowCols, ok bool) {
	switch n := n.(type) {
	case *plan.WindowTVF:
		w := n.Input.Schema().Len()
		return windowCols{spec: n.Spec, start: w, end: w + 1, time: w + 2, tvf: true}, true
	case *plan.WindowAggregate:
		k := len(n.Keys)
		return windowCols{spec: n.Spec, start: k, end: k + 1, time: k + 2}, true
	case *plan.WindowRank:
		return windowColsOf(n.Input)
	case *plan.Calc:
		in, ok := windowColsOf(n.Input)
		if !ok {
			return in, false
		}
		wc = windowCols{spec: in.spec, start: -1, end: -1, time: -1, tvf: in.tvf}
		for i, p := range n.Projs {
			c, isCol := p.(*expr.Column)
			if !isCol {
				continue
			}
			switch {
			case c.Index == in.start && wc.start < 0:
				wc.start = i
			case c.Index == in.end && wc.end < 0:
				wc.end = i
			case c.Index == in.time && wc.time < 0:
				wc.time = i
			}
		}
		return wc, wc.start >= 0 && wc.end >= 0
	}
	return windowCols{}, false
}

// windowRank returns the WindowRank that r is when its rows carry their
// window and it partitions by the window, as in Flink: by window_start and
// window_end, or over a window TVF by window_end alone. It returns nil
// otherwise (r is an updating Top-N). out, r's output scope, gets the time
// attribute of window_time back: the output is append-only and leaves as
// the watermark passes each window, so more windowing can follow.
func windowRank(r *plan.Rank, out *scope) plan.Node {
	wc, ok := windowColsOf(r.Input)
	if !ok {
		return nil
	}
	var start, end bool
	var part []int
	for _, c := range r.Partition {
		switch c {
		case wc.start:
			start = true
		case wc.end:
			end = true
		default:
			part = append(part, c)
		}
	}
	if !end || !start && !wc.tvf {
		return nil
	}
	w := &plan.WindowRank{Input: r.Input, Spec: wc.spec, Start: wc.start, End: wc.end, Partition: part,
		Order: r.Order, Type: r.Type, TVF: wc.tvf, At: r.At}
	w.Out.Columns = append([]types.Column(nil), r.Out.Columns...)
	if wc.time >= 0 {
		if t := r.Input.Schema().Columns[wc.time].Type; t.TimeAttr != types.NoTimeAttr {
			w.Out.Columns[wc.time].Type = t
			out.cols[wc.time].typ = t
		}
	}
	return w
}
