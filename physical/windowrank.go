package physical

import (
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/exec/windowrank"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/token"
)

// maxTopN bounds N of a Top-N, updating or windowed.
const maxTopN = 100_000

// positioned is an error about a plan node written at at: a positioned
// one (file:line:col) when at is known.
func positioned(at token.Position, format string, args ...any) error {
	if !at.IsValid() {
		return fmt.Errorf(format, args...)
	}
	return &token.Error{Pos: at, Msg: fmt.Sprintf(format, args...)}
}

// windowRank builds a window Top-N: the input re-keyed by the partition
// columns other than the window (a window's rows of one key meet in one
// task, whatever the window).
func (b *builder) windowRank(n *plan.WindowRank) (*pipe, error) {
	if n.Limit <= 0 {
		return nil, positioned(n.At, "%s() over a window needs a bound on its number in the enclosing query (WHERE rownum <= N, rownum = 1 or rownum BETWEEN M AND N)", n.Type)
	}
	if n.Limit > maxTopN {
		return nil, positioned(n.At, "window Top-N with N = %d: at most %d rows per partition are supported", n.Limit, maxTopN)
	}
	cfg := windowrank.Config{Start: n.Start, End: n.End, Partition: n.Partition, Type: rankType(n.Type),
		Limit: int(n.Limit), First: int(n.First), LaterFirst: n.KeepLast(), Types: columnTypes(n.Input.Schema())}
	if n.Spec.LTZ {
		cfg.Zone = b.env.Expr.Location
	}
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
