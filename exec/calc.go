package exec

import (
	"fmt"

	"github.com/sluicesql/sluice/types"
)

// RowFunc computes one value from an input row (a compiled expression).
type RowFunc func(row []types.Value) (types.Value, error)

// RowPredicate tests an input row; true keeps it (a compiled condition).
type RowPredicate func(row []types.Value) (bool, error)

// Calc filters and projects rows: the fused WHERE + SELECT list of a query.
// With no projections it only filters and forwards rows without copying
// their values. It allocates nothing per row in the steady state.
type Calc struct {
	// Filter keeps a row when it returns true; nil keeps every row.
	Filter RowPredicate
	// Projs computes the output columns; nil forwards input rows as they are.
	Projs []RowFunc
	// Cols, if set, is parallel to Projs: Cols[j] >= 0 says that output
	// column j is input column Cols[j], which Process then copies without
	// calling Projs[j] (plain column references are most of a SELECT list).
	Cols []int
	// NextRow, if set, is called before Filter and Projs see a new row:
	// expressions compiled together share the values of common
	// sub-expressions within a row (expr.Program.NextRow).
	NextRow func()
	Next    Operator

	out *types.Batch
	// prefix is how many leading outputs are the input's leading columns
	// in order, copied at once; exprs lists the other outputs.
	prefix int
	exprs  []calcExpr
}

// calcExpr is one output column after the copied prefix: a copied input
// column (col >= 0) or a computed one.
type calcExpr struct {
	out, col int
	f        RowFunc
}

// Open implements Operator.
func (c *Calc) Open(ctx *Context) error {
	// The batch grows as rows come: a rule's Calc that keeps few rows
	// holds little (thousands of rules each have one).
	c.out = &types.Batch{}
	c.prefix, c.exprs = 0, c.exprs[:0]
	for j, p := range c.Projs {
		col := -1
		if j < len(c.Cols) {
			col = c.Cols[j]
		}
		if col == j && c.prefix == j {
			c.prefix++
			continue
		}
		c.exprs = append(c.exprs, calcExpr{out: j, col: col, f: p})
	}
	return c.Next.Open(ctx)
}

// Process implements Operator.
func (c *Calc) Process(b *types.Batch) error {
	out := c.out
	out.Truncate()
	w := len(c.Projs)
	for i := range b.Rows {
		r := &b.Rows[i]
		if c.NextRow != nil {
			c.NextRow()
		}
		if c.Filter != nil {
			ok, err := c.Filter(r.Vals)
			if err != nil {
				return fmt.Errorf("cannot evaluate filter%s: %w", rowAt(r.Origin), err)
			}
			if !ok {
				continue
			}
		}
		if c.Projs == nil {
			out.Rows = append(out.Rows, *r)
			continue
		}
		vals := out.AddRow(r.Kind, r.Origin, w)
		copy(vals[:c.prefix], r.Vals)
		for _, e := range c.exprs {
			if e.col >= 0 {
				vals[e.out] = r.Vals[e.col]
				continue
			}
			v, err := e.f(r.Vals)
			if err != nil {
				return fmt.Errorf("cannot evaluate column %d%s: %w", e.out+1, rowAt(r.Origin), err)
			}
			vals[e.out] = v
		}
	}
	if len(out.Rows) == 0 {
		return nil
	}
	return c.Next.Process(out)
}

// Watermark implements Operator.
func (c *Calc) Watermark(wm int64) error { return c.Next.Watermark(wm) }

// Finish implements Operator.
func (c *Calc) Finish() error { return c.Next.Finish() }

// Close implements Operator.
func (c *Calc) Close() error { return c.Next.Close() }

// rowAt names the source record a row came from, for run-time errors: a
// file's line, a topic's offset. Empty for rows that come from no one
// record (aggregates, joins).
func rowAt(o types.Origin) string {
	if o.Part < 0 {
		return ""
	}
	return fmt.Sprintf(" of the row from source partition %d, offset %d", o.Part, o.Offset)
}
