// Package lookup runs lookup joins: each row of the input is joined, as it
// arrives, with the rows of a dimension table that its key finds. The
// dimension is looked up, never kept in the job's state: the operator is
// stateless for checkpoints, and a replayed row is joined again with the
// dimension as it is then.
package lookup

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// Dim is a dimension table opened for lookups by one key set.
type Dim interface {
	// Lookup calls visit with every row whose key columns equal key (no
	// NULL in it), until visit returns false. A row is valid only during
	// its visit.
	Lookup(ctx context.Context, key []types.Value, visit func(row []types.Value) bool) error
	// Close gives the table up.
	Close() error
}

// Stats count a lookup join's work; safe for concurrent use.
type Stats struct {
	Lookups atomic.Int64 // keys looked up (rows with a NULL key are not)
	Hits    atomic.Int64 // lookups that found at least one row
}

// Config configures a lookup join operator.
type Config struct {
	// Left: a LEFT join (unmatched rows padded with NULLs), else INNER.
	Left bool
	// Key computes the key's values from an input row, one per key
	// column of the dimension.
	Key []exec.RowFunc
	// DimWidth is the number of columns of a dimension row.
	DimWidth int
	// Residual, if set, must hold on the joined row (input then
	// dimension columns).
	Residual exec.RowPredicate
	// Open opens the dimension; the operator closes it with itself.
	Open  func(ctx context.Context) (Dim, error)
	Stats *Stats
	Next  exec.Operator
}

// Operator is a lookup join.
type Operator struct {
	cfg Config
	ctx context.Context
	dim Dim
	out *types.Batch
	key []types.Value
	row []types.Value
}

// New returns a lookup join operator.
func New(cfg Config) (*Operator, error) {
	if cfg.Open == nil || cfg.Next == nil || len(cfg.Key) == 0 {
		return nil, fmt.Errorf("lookup join: incomplete configuration")
	}
	if cfg.Stats == nil {
		cfg.Stats = &Stats{}
	}
	return &Operator{cfg: cfg, key: make([]types.Value, len(cfg.Key))}, nil
}

// Open implements exec.Operator: it opens the dimension (for a table
// loaded in full, its first user loads it).
func (o *Operator) Open(ctx *exec.Context) error {
	o.ctx = context.Background()
	if ctx != nil && ctx.Ctx != nil {
		o.ctx = ctx.Ctx
	}
	d, err := o.cfg.Open(o.ctx)
	if err != nil {
		return err
	}
	o.dim = d
	o.out = types.NewBatch(256, 8)
	return o.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	out := o.out
	out.Reset()
	var err error
	for i := range b.Rows {
		r := &b.Rows[i]
		lw := len(r.Vals)
		if cap(o.row) < lw+o.cfg.DimWidth {
			o.row = make([]types.Value, lw+o.cfg.DimWidth)
		}
		row := o.row[:lw+o.cfg.DimWidth]
		copy(row, r.Vals)
		null := false
		for j, f := range o.cfg.Key {
			if o.key[j], err = f(r.Vals); err != nil {
				return fmt.Errorf("lookup join: cannot evaluate key %d: %w", j+1, err)
			}
			null = null || o.key[j].IsNull()
		}
		matched := 0
		if !null {
			o.cfg.Stats.Lookups.Add(1)
			found := false
			var verr error
			lerr := o.dim.Lookup(o.ctx, o.key, func(d []types.Value) bool {
				found = true
				copy(row[lw:], d)
				if o.cfg.Residual != nil {
					ok, err := o.cfg.Residual(row)
					if err != nil {
						verr = fmt.Errorf("lookup join: cannot evaluate the join condition: %w", err)
						return false
					}
					if !ok {
						return true
					}
				}
				// The first row keeps the input row's origin; more rows
				// of one input row have none, so that an operator that
				// drops replays does not take them for one.
				origin := r.Origin
				if matched > 0 {
					origin = types.NoOrigin
				}
				vals := out.AddRow(types.Insert, origin, len(row))
				copy(vals, row)
				matched++
				return true
			})
			if lerr != nil {
				return fmt.Errorf("lookup join: %w", lerr)
			}
			if verr != nil {
				return verr
			}
			if found {
				o.cfg.Stats.Hits.Add(1)
			}
		}
		if matched == 0 && o.cfg.Left {
			vals := out.AddRow(types.Insert, r.Origin, len(row))
			copy(vals, r.Vals) // the dimension's columns stay NULL
		}
		if len(out.Rows) >= 1024 {
			if err := o.cfg.Next.Process(out); err != nil {
				return err
			}
			out.Reset()
		}
	}
	if len(out.Rows) == 0 {
		return nil
	}
	return o.cfg.Next.Process(out)
}

// Watermark implements exec.Operator.
func (o *Operator) Watermark(wm int64) error { return o.cfg.Next.Watermark(wm) }

// Finish implements exec.Operator.
func (o *Operator) Finish() error { return o.cfg.Next.Finish() }

// Close implements exec.Operator: it gives the dimension up.
func (o *Operator) Close() error {
	var err error
	if o.dim != nil {
		err = o.dim.Close()
		o.dim = nil
	}
	if nerr := o.cfg.Next.Close(); err == nil {
		err = nerr
	}
	return err
}
