package planner

import (
	"slices"

	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// rankFuncs are the ranking functions a Top-N may number rows with.
var rankFuncs = map[string]plan.RankType{
	"ROW_NUMBER": plan.RowNumberRank,
	"RANK":       plan.StandardRank,
	"DENSE_RANK": plan.DenseRank,
}

// windowRank returns the WindowRank that r is when its rows carry their
// window and it partitions by the window, as in Flink: by window_start and
// window_end, or over a window TVF by window_end alone. It returns nil
// otherwise (r is an updating Top-N). out, r's output scope, gets the time
// attribute of window_time back: the output is append-only and leaves as
// the watermark passes each window, so more windowing can follow.
func windowRank(r *plan.Rank, out *scope) plan.Node {
	wp, ok := windowPropsOf(r.Input)
	if !ok {
		return nil
	}
	start, end := -1, -1
	var part []int
	for _, c := range r.Partition {
		switch {
		case start < 0 && slices.Contains(wp.starts, c):
			start = c
		case end < 0 && slices.Contains(wp.ends, c):
			end = c
		default:
			part = append(part, c)
		}
	}
	if end < 0 || start < 0 && !wp.tvf {
		return nil
	}
	if start < 0 {
		start = wp.starts[0]
	}
	w := &plan.WindowRank{Input: r.Input, Spec: wp.spec, Start: start, End: end, Partition: part,
		Order: r.Order, Type: r.Type, TVF: wp.tvf, At: r.At}
	w.Out.Columns = append([]types.Column(nil), r.Out.Columns...)
	for _, tc := range wp.times {
		if t := r.Input.Schema().Columns[tc].Type; t.TimeAttr != types.NoTimeAttr {
			w.Out.Columns[tc].Type = t
			out.cols[tc].typ = t
		}
	}
	return w
}
