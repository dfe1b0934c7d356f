package exec

import (
	"fmt"
	"unicode/utf8"

	"github.com/sluicesql/sluice/types"
)

// ConstraintEnforcer checks the rows on their way into a sink against the
// sink's column types, as Flink's ConstraintEnforcer does.
//
// Its NOT NULL part: a NULL in one of the NotNull columns fails the job
// with Flink's message, or, with Drop ('table.exec.sink.not-null-enforcer'
// = 'DROP'), drops the row and counts it in the job's metrics.
//
// Its length part ('table.exec.sink.type-length-enforcer'): with Trim, the
// values of the Lengths columns are cut to their CHAR(n), VARCHAR(n),
// BINARY(n) or VARBINARY(n) length, and shorter CHAR values padded with
// spaces and BINARY values with zero bytes (TRIM_PAD); without it, a value
// that would be cut or padded fails the job (ERROR).
//
// Rows that need nothing go on unchanged; a batch whose rows all do is
// forwarded as it is.
type ConstraintEnforcer struct {
	// Table names the sink, for the error.
	Table string
	// NotNull are the indexes of the NOT NULL columns; Names their names.
	NotNull []int
	Names   []string
	Drop    bool
	// Lengths are the columns whose length is enforced.
	Lengths []LengthColumn
	Trim    bool
	Next    Operator

	metrics *Metrics
	out     *types.Batch
}

// LengthColumn is a column whose length a ConstraintEnforcer enforces.
type LengthColumn struct {
	Col  int
	Name string
	// Type is the column's CHAR(n), VARCHAR(n), BINARY(n) or
	// VARBINARY(n).
	Type types.Type
}

// fits reports whether v has the length of c's type: not longer, and for
// CHAR and BINARY not shorter either.
func (c *LengthColumn) fits(v types.Value) bool {
	if v.IsNull() {
		return true
	}
	n, s := c.Type.Precision, v.Str()
	fixed := c.Type.Kind == types.KindChar || c.Type.Kind == types.KindBinary
	if c.Type.Kind.IsBinary() || len(s) <= n && !fixed {
		// Bytes, or no more bytes than characters allowed.
		l := len(s)
		return l <= n && (!fixed || l == n)
	}
	l := utf8.RuneCountInString(s)
	return l <= n && (!fixed || l == n)
}

// Open implements Operator.
func (e *ConstraintEnforcer) Open(ctx *Context) error {
	e.metrics = ctx.Metrics
	e.out = types.NewBatch(0, 1)
	return e.Next.Open(ctx)
}

// nullAt returns the index in e.NotNull of the first NULL NOT NULL column
// of row, or -1.
func (e *ConstraintEnforcer) nullAt(row []types.Value) int {
	for i, c := range e.NotNull {
		if row[c].IsNull() {
			return i
		}
	}
	return -1
}

// misfit returns the index in e.Lengths of the first value of row that
// does not have its column's length, or -1.
func (e *ConstraintEnforcer) misfit(row []types.Value) int {
	for i := range e.Lengths {
		if !e.Lengths[i].fits(row[e.Lengths[i].Col]) {
			return i
		}
	}
	return -1
}

// check returns whether row goes on as it is, or is dropped or fixed (its
// lengths), or the error that fails the job.
func (e *ConstraintEnforcer) check(row []types.Value) (keep, fix bool, err error) {
	if j := e.nullAt(row); j >= 0 {
		if !e.Drop {
			return false, false, fmt.Errorf("cannot write to table '%s': Column '%s' is NOT NULL, however, a null value is being written into it. "+
				"You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently.",
				e.Table, e.Names[j])
		}
		return false, false, nil
	}
	j := e.misfit(row)
	if j < 0 {
		return true, false, nil
	}
	if !e.Trim {
		// Flink's message, which says "a string" for binary values too.
		c := &e.Lengths[j]
		return false, false, fmt.Errorf("cannot write to table '%s': Column '%s' is %s, however, a string of length %d is being written into it. "+
			"You can set job configuration 'table.exec.sink.type-length-enforcer' to control this behaviour.",
			e.Table, c.Name, c.Type.WithNullable(true), types.Length(row[c.Col]))
	}
	return true, true, nil
}

// Process implements Operator.
func (e *ConstraintEnforcer) Process(b *types.Batch) error {
	first := -1
	for i := range b.Rows {
		keep, fix, err := e.check(b.Rows[i].Vals)
		if err != nil {
			return err
		}
		if !keep || fix {
			first = i
			break
		}
	}
	if first < 0 {
		return e.Next.Process(b)
	}
	// The rows kept refer to b's values, which stay valid for this call;
	// fixed rows are copies in out's arena (b's values are not ours to
	// change). out is cleared after the call, so that it holds no
	// references.
	out := e.out
	out.Reset()
	out.Rows = append(out.Rows, b.Rows[:first]...)
	var dropped int64
	for i := first; i < len(b.Rows); i++ {
		r := b.Rows[i]
		keep, fix, err := e.check(r.Vals)
		switch {
		case err != nil:
			return err
		case !keep:
			dropped++
			continue
		case fix:
			vals := out.AddRow(r.Kind, r.Origin, len(r.Vals))
			copy(vals, r.Vals)
			for _, c := range e.Lengths {
				vals[c.Col] = types.FitLength(vals[c.Col], c.Type)
			}
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	if e.metrics != nil && dropped > 0 {
		e.metrics.NullRowsDropped.Add(dropped)
	}
	if len(out.Rows) == 0 {
		return nil
	}
	err := e.Next.Process(out)
	clear(out.Rows)
	out.Reset()
	return err
}

// Watermark implements Operator.
func (e *ConstraintEnforcer) Watermark(wm int64) error { return e.Next.Watermark(wm) }

// Finish implements Operator.
func (e *ConstraintEnforcer) Finish() error { return e.Next.Finish() }

// Close implements Operator.
func (e *ConstraintEnforcer) Close() error { return e.Next.Close() }
