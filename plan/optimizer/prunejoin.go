package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// pruneJoinInputs narrows the inputs of a regular join to the columns
// that the Calc above it, the join's keys and its residual condition
// read, as Flink's project-join transpose does: a join keeps its inputs'
// rows in state, so a column no one reads after it costs memory, copies
// and state size for nothing. Each input gets a Calc of the columns kept
// (merged into the Calc it may already end in), and the join and the
// Calc above read the narrower rows. Rows that differ only in a dropped
// column become equal; the join counts equal rows, so every output row
// keeps its multiplicity.
func pruneJoinInputs(o *Optimizer, n plan.Node) plan.Node {
	c, ok := n.(*plan.Calc)
	if !ok {
		return n
	}
	j, ok := c.Input.(*plan.Join)
	if !ok || j.Kind == plan.SemiJoin || j.Kind == plan.AntiJoin {
		return n
	}
	nl, nr := j.Left.Schema().Len(), j.Right.Schema().Len()
	if j.Out.Len() != nl+nr {
		return n
	}
	used := make([]bool, nl+nr)
	mark := func(e expr.Node) {
		if e == nil {
			return
		}
		for _, i := range expr.Columns(e) {
			if i < len(used) {
				used[i] = true
			}
		}
	}
	mark(c.Filter)
	for _, p := range c.Projs {
		mark(p)
	}
	mark(j.Residual)
	for _, k := range j.LeftKeys {
		used[k] = true
	}
	for _, k := range j.RightKeys {
		used[nl+k] = true
	}
	var keepL, keepR []int
	where := make([]int, nl+nr) // old join column -> new one
	for i, u := range used {
		if !u {
			where[i] = -1
			continue
		}
		if i < nl {
			keepL = append(keepL, i)
		} else {
			keepR = append(keepR, i-nl)
		}
	}
	if len(keepL) == nl && len(keepR) == nr {
		return n
	}
	// A side none of whose columns is read still decides the matches: keep
	// one column of it, so that its rows exist.
	if len(keepL) == 0 {
		keepL = []int{0}
	}
	if len(keepR) == 0 {
		keepR = []int{0}
	}
	for k, i := range keepL {
		where[i] = k
	}
	for k, i := range keepR {
		where[nl+i] = len(keepL) + k
	}
	project := func(in plan.Node, keep []int) plan.Node {
		schema := in.Schema()
		p := &plan.Calc{Input: in}
		for _, i := range keep {
			col := schema.Columns[i]
			p.Projs = append(p.Projs, &expr.Column{Index: i, Name: col.Name, T: col.Type})
			p.Out.Columns = append(p.Out.Columns, col)
		}
		return removeIdentityCalc(o, mergeCalc(o, p))
	}
	nj := *j
	nj.Left, nj.Right = project(j.Left, keepL), project(j.Right, keepR)
	nj.LeftKeys, nj.RightKeys = remapKeys(j.LeftKeys, keepL), remapKeys(j.RightKeys, keepR)
	nj.Out = types.Schema{}
	for _, i := range keepL {
		nj.Out.Columns = append(nj.Out.Columns, j.Out.Columns[i])
	}
	for _, i := range keepR {
		nj.Out.Columns = append(nj.Out.Columns, j.Out.Columns[nl+i])
	}
	remap := func(e expr.Node) expr.Node {
		if e == nil {
			return nil
		}
		return expr.MapColumns(e, func(col *expr.Column) expr.Node {
			cp := *col
			cp.Index = where[col.Index]
			return &cp
		})
	}
	nj.Residual = remap(j.Residual)
	nc := &plan.Calc{Input: &nj, Filter: remap(c.Filter), Out: c.Out}
	for _, p := range c.Projs {
		nc.Projs = append(nc.Projs, remap(p))
	}
	return nc
}

// remapKeys gives the positions of keys among the kept columns.
func remapKeys(keys, keep []int) []int {
	out := make([]int, len(keys))
	for i, k := range keys {
		for p, x := range keep {
			if x == k {
				out[i] = p
			}
		}
	}
	return out
}
