package physical

import (
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/join"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
)

// windowJoin builds a window join: both inputs re-keyed by their join keys
// into one stage (one task when the windows are the only keys).
func (b *builder) windowJoin(n *plan.WindowJoin) (*pipe, error) {
	left, err := b.build(n.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(n.Right)
	if err != nil {
		return nil, err
	}
	lk, rk := n.PartitionKeys()
	par := b.env.Parallelism
	if len(lk) == 0 {
		par = 1
	}
	var p *pipe
	if b.env.Cluster != nil {
		p, err = b.clusterJoin("window-join", par, lk, rk,
			columnTypes(n.Left.Schema()), columnTypes(n.Right.Schema()), left, right)
		if err != nil {
			return nil, err
		}
	} else {
		p = b.newStage("window-join", par, nil, left, right)
		p.stage.InputKeys = [][]int{lk, rk}
	}
	cfg := join.WindowConfig{
		Config: join.Config{ID: b.id("window-join", opLabel(n), computes(n)), Kind: join.Kind(n.Kind), LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
			NullSafe: n.NullSafe, NullAware: n.NullAware,
			Left: columnTypes(n.Left.Schema()), Right: columnTypes(n.Right.Schema())},
		LeftStart: n.LeftStart, LeftEnd: n.LeftEnd, RightStart: n.RightStart, RightEnd: n.RightEnd,
	}
	if n.Spec.LTZ {
		cfg.Zone = b.env.Expr.Location
	}
	residual, env := n.Residual, b.env.Expr
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID = fmt.Sprintf("%s/%d", cfg.ID, task)
		c.Next = next
		if residual != nil {
			pred, err := expr.CompilePredicate(residual, env)
			if err != nil {
				return nil, err
			}
			c.Residual = pred
		}
		return join.NewWindow(c)
	})
	return p, nil
}
