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
	cfg     Config
	ctx     context.Context
	dim     Dim
	metrics *exec.Metrics
	out     *types.Batch
	key     []types.Value

	// The input row being joined, for visit (a method value made once,
	// so that a lookup allocates nothing).
	visitFn func(row []types.Value) bool
	in      *types.Row
	row     []types.Value
	found   bool
	matched int
	err     error
}

// New returns a lookup join operator.
func New(cfg Config) (*Operator, error) {
	if cfg.Open == nil || cfg.Next == nil || len(cfg.Key) == 0 {
		return nil, fmt.Errorf("lookup join: incomplete configuration")
	}
	if cfg.Stats == nil {
		cfg.Stats = &Stats{}
	}
	o := &Operator{cfg: cfg, key: make([]types.Value, len(cfg.Key))}
	o.visitFn = o.visit
	return o, nil
}

// Open implements exec.Operator: it opens the dimension (for a table
// loaded in full, its first user loads it).
func (o *Operator) Open(ctx *exec.Context) error {
	o.ctx = context.Background()
	if ctx != nil {
		if ctx.Ctx != nil {
			o.ctx = ctx.Ctx
		}
		o.metrics = ctx.Metrics
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
	var lookups, hits int64
	defer func() {
		o.cfg.Stats.Lookups.Add(lookups)
		o.cfg.Stats.Hits.Add(hits)
		if o.metrics != nil {
			o.metrics.Lookups.Add(lookups)
			o.metrics.LookupHits.Add(hits)
		}
	}()
	var err error
	for i := range b.Rows {
		r := &b.Rows[i]
		lw := len(r.Vals)
		if cap(o.row) < lw+o.cfg.DimWidth {
			o.row = make([]types.Value, lw+o.cfg.DimWidth)
		}
		o.row = o.row[:lw+o.cfg.DimWidth]
		copy(o.row, r.Vals)
		null := false
		for j, f := range o.cfg.Key {
			if o.key[j], err = f(r.Vals); err != nil {
				return fmt.Errorf("lookup join: cannot evaluate key %d: %w", j+1, err)
			}
			null = null || o.key[j].IsNull()
		}
		o.in, o.found, o.matched, o.err = r, false, 0, nil
		if !null {
			lookups++
			if err := o.dim.Lookup(o.ctx, o.key, o.visitFn); err != nil {
				return fmt.Errorf("lookup join: %w", err)
			}
			if o.err != nil {
				return o.err
			}
			if o.found {
				hits++
			}
		}
		if o.matched == 0 && o.cfg.Left {
			vals := out.AddRow(types.Insert, r.Origin, len(o.row))
			copy(vals, r.Vals) // the dimension's columns stay NULL
		}
		if len(out.Rows) >= 1024 {
			if err := o.cfg.Next.Process(out); err != nil {
				return err
			}
			out.Reset()
		}
	}
	o.in = nil
	if len(out.Rows) == 0 {
		return nil
	}
	return o.cfg.Next.Process(out)
}

// visit joins the input row o.in with the dimension row d.
func (o *Operator) visit(d []types.Value) bool {
	o.found = true
	lw := len(o.in.Vals)
	copy(o.row[lw:], d)
	if o.cfg.Residual != nil {
		ok, err := o.cfg.Residual(o.row)
		if err != nil {
			o.err = fmt.Errorf("lookup join: cannot evaluate the join condition: %w", err)
			return false
		}
		if !ok {
			return true
		}
	}
	// The first row keeps the input row's origin; more rows of one input
	// row have none, so that an operator that drops replays does not take
	// them for one.
	origin := o.in.Origin
	if o.matched > 0 {
		origin = types.NoOrigin
	}
	vals := o.out.AddRow(types.Insert, origin, len(o.row))
	copy(vals, o.row)
	o.matched++
	return true
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
