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
		return nil, fmt.Errorf("%s() over a window needs a bound on its number in the enclosing query (WHERE rownum <= N, or rownum = 1)", n.Type)
	}
	if n.Limit > maxTopN {
		return nil, fmt.Errorf("window Top-N with N = %d: at most %d rows per partition are supported", n.Limit, maxTopN)
	}
	cfg := windowrank.Config{Start: n.Start, End: n.End, Partition: n.Partition, Type: rankType(n.Type),
		Limit: int(n.Limit), LaterFirst: n.KeepLast(), Types: columnTypes(n.Input.Schema())}
	for _, k := range n.Order {
		cfg.Order = append(cfg.Order, rank.SortKey{Col: k.Col, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	return b.keyed("window-rank", n, n.Partition, n.Input, func(id string, next exec.Operator) (exec.Operator, error) {
		c := cfg
		c.ID, c.Next = id, next
		return windowrank.New(c)
	})
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
