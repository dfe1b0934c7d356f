package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// PruneScans marks, on each Scan of the tree rooted at n that a Calc
// reads, the columns of the scan's output that the query uses
// (Scan.Used) and the columns of the connector's row that must be
// decoded for them (Table.Read): those the Calc reads, those its computed
// columns read, and those the watermark reads. A connector may then leave
// the others NULL without decoding them, and the scan skips computed
// columns nothing reads. A scan read by any other node, and a changelog
// scan (whose rows are matched by key downstream), keeps every column.
// It runs once, on the optimized plan: the rules before it may move and
// merge Calcs.
func PruneScans(n plan.Node) {
	for _, in := range n.Inputs() {
		if s, ok := in.(*plan.Scan); ok {
			if c, ok := n.(*plan.Calc); ok {
				pruneScan(s, c)
			}
			continue
		}
		PruneScans(in)
	}
}

func pruneScan(s *plan.Scan, c *plan.Calc) {
	if s.Changelog || s.Upsert || len(s.Computed) != s.Out.Len() {
		return
	}
	used := make([]bool, s.Out.Len())
	// visit sets marks[i] for a column i < len(marks): expr.Columns
	// without its list, for a rule set prunes thousands of scans.
	var marks []bool
	visit := func(x expr.Node) bool {
		if col, ok := x.(*expr.Column); ok && col.Index < len(marks) {
			marks[col.Index] = true
		}
		return true
	}
	mark := func(e expr.Node) {
		marks = used
		expr.Walk(e, visit)
	}
	if c.Filter != nil {
		mark(c.Filter)
	}
	for _, p := range c.Projs {
		mark(p)
	}
	// The scan's own needs: its watermark, and the time attributes the
	// operators after the Calc may take from it through the Calc's
	// projections (marked above when projected).
	if s.Watermark != nil {
		mark(s.Watermark)
	}
	if s.RowtimeCol >= 0 {
		used[s.RowtimeCol] = true
	}
	width := s.Table.Schema.Len() + len(s.Table.Metadata)
	read := make([]bool, width)
	all := true
	marks = read
	for i, u := range used {
		if !u {
			all = false
			continue
		}
		expr.Walk(s.Computed[i], visit)
	}
	if all {
		return
	}
	s.Used = used
	s.Table.Read = read
}
