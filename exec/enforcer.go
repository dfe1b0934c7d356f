package exec

import (
	"fmt"

	"github.com/sluicesql/sluice/types"
)

// NotNullEnforcer checks the rows on their way into a sink against the
// sink's NOT NULL columns, as Flink's ConstraintEnforcer does: a NULL in
// one fails the job with Flink's message, or, with Drop
// ('table.exec.sink.not-null-enforcer' = 'DROP'), drops the row and
// counts it in the job's metrics. Rows that pass go on unchanged; a batch
// without NULLs in those columns is forwarded as it is.
type NotNullEnforcer struct {
	// Table names the sink, for the error.
	Table string
	// Cols are the indexes of the NOT NULL columns; Names their names.
	Cols  []int
	Names []string
	Drop  bool
	Next  Operator

	metrics *Metrics
	out     *types.Batch
}

// Open implements Operator.
func (e *NotNullEnforcer) Open(ctx *Context) error {
	e.metrics = ctx.Metrics
	e.out = types.NewBatch(0, 1)
	return e.Next.Open(ctx)
}

// bad returns the index in e.Cols of the first NULL NOT NULL column of
// row, or -1.
func (e *NotNullEnforcer) bad(row []types.Value) int {
	for i, c := range e.Cols {
		if row[c].IsNull() {
			return i
		}
	}
	return -1
}

// Process implements Operator.
func (e *NotNullEnforcer) Process(b *types.Batch) error {
	first := -1
	for i := range b.Rows {
		if j := e.bad(b.Rows[i].Vals); j >= 0 {
			if !e.Drop {
				return fmt.Errorf("cannot write to table '%s': Column '%s' is NOT NULL, however, a null value is being written into it. "+
					"You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently.",
					e.Table, e.Names[j])
			}
			first = i
			break
		}
	}
	if first < 0 {
		return e.Next.Process(b)
	}
	// The rows kept refer to b's values, which stay valid for this call;
	// they are cleared after it, so that out holds no references.
	out := e.out
	out.Rows = append(out.Rows[:0], b.Rows[:first]...)
	var dropped int64
	for i := first; i < len(b.Rows); i++ {
		if e.bad(b.Rows[i].Vals) >= 0 {
			dropped++
			continue
		}
		out.Rows = append(out.Rows, b.Rows[i])
	}
	if e.metrics != nil {
		e.metrics.NullRowsDropped.Add(dropped)
	}
	if len(out.Rows) == 0 {
		return nil
	}
	err := e.Next.Process(out)
	clear(out.Rows)
	out.Rows = out.Rows[:0]
	return err
}

// Watermark implements Operator.
func (e *NotNullEnforcer) Watermark(wm int64) error { return e.Next.Watermark(wm) }

// Finish implements Operator.
func (e *NotNullEnforcer) Finish() error { return e.Next.Finish() }

// Close implements Operator.
func (e *NotNullEnforcer) Close() error { return e.Next.Close() }
