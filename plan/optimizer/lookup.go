package optimizer

import (
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// pushFilterIntoLookupJoin moves the conditions that read the input side of
// a lookup join only below it, so that fewer rows are looked up: from a
// filter above the join (the input side is never padded), and, for an
// INNER join, from the rest of ON. Conditions on the dimension stay where
// they are: the dimension is looked up, not scanned.
func pushFilterIntoLookupJoin(o *Optimizer, n plan.Node) plan.Node {
	c, _ := n.(*plan.Calc)
	var lj *plan.LookupJoin
	if c != nil {
		lj, _ = c.Input.(*plan.LookupJoin)
	} else {
		lj, _ = n.(*plan.LookupJoin)
	}
	if lj == nil {
		return n
	}
	nl := lj.Input.Schema().Len()
	var down []expr.Node
	split := func(cond expr.Node) (keep []expr.Node) {
		if cond == nil {
			return nil
		}
		for _, e := range expr.Conjuncts(cond) {
			if cols := expr.Columns(e); len(cols) > 0 && cols[len(cols)-1] < nl {
				down = append(down, e)
			} else {
				keep = append(keep, e)
			}
		}
		return keep
	}
	var where, on []expr.Node
	if c != nil {
		where = split(c.Filter)
	}
	if lj.Kind == plan.InnerJoin {
		on = split(lj.Residual)
	} else if lj.Residual != nil {
		on = []expr.Node{lj.Residual}
	}
	if len(down) == 0 {
		return n
	}
	f, ok := o.and(down)
	if !ok {
		return n
	}
	s := lj.Input.Schema()
	calc := &plan.Calc{Input: lj.Input, Filter: f, Out: s}
	for i, col := range s.Columns {
		calc.Projs = append(calc.Projs, &expr.Column{Index: i, Name: col.Name, T: col.Type})
	}
	nj := *lj
	nj.Input = removeIdentityCalc(o, mergeCalc(o, calc))
	if nj.Residual, ok = o.and(on); !ok {
		return n
	}
	if c == nil {
		return &nj
	}
	nc := *c
	nc.Input = &nj
	if nc.Filter, ok = o.and(where); !ok {
		return n
	}
	return &nc
}
