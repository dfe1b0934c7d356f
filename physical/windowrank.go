package physical

import (
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/exec/windowrank"
	"github.com/sluicesql/sluice/plan"
)

// maxTopN bounds N of a window Top-N, as of the updating Top-N.
const maxTopN = 100_000

// windowRank builds a window Top-N: the input re-keyed by the partition
// columns other than the window (a window's rows of one key meet in one
// task, whatever the window).
func (b *builder) windowRank(n *plan.WindowRank) (*pipe, error) {
	if n.Limit <= 0 {
		return nil, fmt.Errorf("%s() over a window needs a bound on its number in the enclosing query (WHERE rownum <= N, or rownum = 1): OVER aggregation is not supported yet", n.Type)
	}
	if n.Limit > maxTopN {
		return nil, fmt.Errorf("window Top-N with N = %d: at most %d rows per partition are supported", n.Limit, maxTopN)
	}
	p, err := b.build(n.Input)
	if err != nil {
		return nil, err
	}
	par := 1
	if len(n.Partition) > 0 {
		par = b.env.Parallelism
	}
	if p, err = b.exchange("window-rank", par, n.Partition, n.Input, p); err != nil {
		return nil, err
	}
	cfg := windowrank.Config{ID: b.id("window-rank"), Start: n.Start, End: n.End, Partition: n.Partition,
		Type: rankType(n.Type), Limit: int(n.Limit), LaterFirst: n.KeepLast()}
	for _, c := range n.Input.Schema().Columns {
		cfg.Types = append(cfg.Types, c.Type)
	}
	for _, k := range n.Order {
		cfg.Order = append(cfg.Order, rank.SortKey{Col: k.Col, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID = fmt.Sprintf("%s/%d", cfg.ID, task)
		c.Next = next
		return windowrank.New(c)
	})
	return p, nil
}

// rankType is the exec form of a numbering function.
func rankType(t plan.RankType) rank.Type {
	switch t {
	case plan.StandardRank:
		return rank.Standard
	case plan.DenseRank:
		return rank.Dense
	}
	return rank.RowNumber
}
