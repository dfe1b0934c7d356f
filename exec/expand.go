package exec

import (
	"github.com/sluicesql/sluice/types"
)

// Expand emits one row per grouping set for each input row (GROUPING SETS,
// ROLLUP, CUBE): Projects[i] gives, for each output column, the input
// column copied into it, or -1 for NULL; column IDCol holds IDs[i], the
// expand id. Output rows keep their input row's kind. The first row of an
// input row keeps its origin; the others have none, so that an operator
// that drops replays does not take them for one (as the rows of a HOP
// window or of a lookup join's further matches). It allocates nothing per
// row in the steady state.
type Expand struct {
	Projects [][]int
	IDs      []int64
	IDCol    int
	Next     Operator

	out *types.Batch
}

// expandBatchRows is how many output rows are collected before they are
// pushed downstream.
const expandBatchRows = 1024

// Open implements Operator.
func (e *Expand) Open(ctx *Context) error {
	w := 1
	if len(e.Projects) > 0 {
		w = len(e.Projects[0])
	}
	e.out = types.NewBatch(256, w)
	return e.Next.Open(ctx)
}

// Process implements Operator.
func (e *Expand) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		origin := r.Origin
		for s, proj := range e.Projects {
			vals := e.out.AddRow(r.Kind, origin, len(proj))
			origin = types.NoOrigin
			for j, c := range proj {
				if c >= 0 {
					vals[j] = r.Vals[c]
				} else {
					vals[j] = types.NullValue
				}
			}
			vals[e.IDCol] = types.BigIntValue(e.IDs[s])
		}
		if len(e.out.Rows) >= expandBatchRows {
			if err := e.flush(); err != nil {
				return err
			}
		}
	}
	return e.flush()
}

func (e *Expand) flush() error {
	if len(e.out.Rows) == 0 {
		return nil
	}
	err := e.Next.Process(e.out)
	e.out.Reset()
	return err
}

// Watermark implements Operator.
func (e *Expand) Watermark(wm int64) error { return e.Next.Watermark(wm) }

// Finish implements Operator.
func (e *Expand) Finish() error { return e.Next.Finish() }

// Close implements Operator.
func (e *Expand) Close() error { return e.Next.Close() }
