package optimizer

import "github.com/sluicesql/sluice/plan"

// windowRankLimit moves the bound on a WindowRank's number from the filter
// above it into the WindowRank (`rn <= N`, `rn BETWEEN M AND N`, ...), as
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
	first, limit, read, nc, ok := takeNumberBound(o, c, r.Out.Len()-1)
	if !ok {
		return n
	}
	nr := *r
	nr.First, nr.Limit, nr.NoNumbers = first, limit, !read
	if limit == 1 && nr.Type == plan.RowNumberRank {
		nr.NoNumbers = true
	}
	nc.Input = &nr
	return nc
}
