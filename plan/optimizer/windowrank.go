package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// windowRankLimit moves the bound on a WindowRank's number from the filter
// above it into the WindowRank (`rn <= N`, `rn < N`, `rn = 1`), as
// rank-limit does for a Rank, and notes whether anything reads the number.
// A ROW_NUMBER bounded by 1 counts as unread: it is 1 in every row left,
// which the WindowRank emits all the same (Flink replaces it by the
// constant), so that `SELECT * ... WHERE rn = 1` is a deduplication.
func windowRankLimit(o *Optimizer, n plan.Node) plan.Node {
	c, ok := n.(*plan.Calc)
	if !ok || c.Filter == nil {
		return n
	}
	r, ok := c.Input.(*plan.WindowRank)
	if !ok || r.Limit > 0 {
		return n
	}
	rn := r.Out.Len() - 1
	limit := int64(0)
	var keep []expr.Node
	for _, e := range expr.Conjuncts(c.Filter) {
		if l, ok := rowNumberBound(e, rn); ok && (limit == 0 || l < limit) {
			limit = l
			continue
		}
		keep = append(keep, e)
	}
	if limit <= 0 {
		return n
	}
	nr := *r
	nr.Limit = limit
	nr.NoNumbers = true
	for _, e := range append(append([]expr.Node(nil), c.Projs...), keep...) {
		for _, col := range expr.Columns(e) {
			if col == rn {
				nr.NoNumbers = false
			}
		}
	}
	if limit == 1 && nr.Type == plan.RowNumberRank {
		nr.NoNumbers = true
	}
	nc := *c
	nc.Input = &nr
	nc.Filter = nil
	for _, e := range keep {
		if nc.Filter == nil {
			nc.Filter = e
		} else if f, err := o.Builder.Call("AND", nc.Filter, e); err == nil {
			nc.Filter = f
		} else {
			return n
		}
	}
	return &nc
}
