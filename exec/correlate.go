package exec

import (
	"fmt"

	"github.com/sluicesql/sluice/types"
)

// TableFunc evaluates a table function's arguments over an input row and
// emits its rows (a compiled LATERAL TABLE call).
type TableFunc func(row []types.Value, emit func([]types.Value) error) error

// Correlate joins each input row with the rows a table function emits for
// it. With Left, a row for which the function emits nothing is kept once
// with NULLs for the function's columns.
type Correlate struct {
	Func TableFunc
	// Width is the number of columns the function emits.
	Width int
	Left  bool
	Next  Operator

	out  *types.Batch
	cur  *types.Row
	n    int
	emit func([]types.Value) error
}

// Open implements Operator.
func (c *Correlate) Open(ctx *Context) error {
	c.out = types.NewBatch(256, 8)
	c.emit = func(vals []types.Value) error {
		r := c.cur
		w := len(r.Vals)
		row := c.out.AddRow(r.Kind, types.NoOrigin, w+c.Width)
		copy(row, r.Vals)
		copy(row[w:], vals)
		c.n++
		if len(c.out.Rows) >= 1024 {
			return c.flush()
		}
		return nil
	}
	return c.Next.Open(ctx)
}

func (c *Correlate) flush() error {
	if len(c.out.Rows) == 0 {
		return nil
	}
	err := c.Next.Process(c.out)
	c.out.Reset()
	return err
}

// Process implements Operator.
func (c *Correlate) Process(b *types.Batch) error {
	for i := range b.Rows {
		c.cur, c.n = &b.Rows[i], 0
		if err := c.Func(b.Rows[i].Vals, c.emit); err != nil {
			if at := rowAt(b.Rows[i].Origin); at != "" {
				return fmt.Errorf("table function%s: %w", at, err)
			}
			return err
		}
		if c.n == 0 && c.Left {
			r := &b.Rows[i]
			row := c.out.AddRow(r.Kind, types.NoOrigin, len(r.Vals)+c.Width)
			copy(row, r.Vals)
		}
	}
	return c.flush()
}

// Watermark implements Operator.
func (c *Correlate) Watermark(wm int64) error { return c.Next.Watermark(wm) }

// Finish implements Operator.
func (c *Correlate) Finish() error { return c.Next.Finish() }

// Close implements Operator.
func (c *Correlate) Close() error { return c.Next.Close() }
