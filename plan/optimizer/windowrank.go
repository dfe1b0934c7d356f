package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// windowRankLimit moves the bound on a WindowRank's number from the filter
// above it into the WindowRank (`rn <= N`, `rn < N`, `rn = 1`), as
// rank-limit does for a Rank, and notes whether anything reads the number.
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
