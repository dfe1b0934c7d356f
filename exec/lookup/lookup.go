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

	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// Dim is a dimension table opened for lookups by one key set.
type Dim interface {
	// LookupBatch looks up every key of keys (no NULL in any), in
	// order, and calls visit with the key's position and each of its
	// rows (whose key columns equal the key) until visit returns false,
	// which goes on with the next key. A row is valid only during its
	// visit.
	LookupBatch(ctx context.Context, keys [][]types.Value, visit func(i int, row []types.Value) bool) error
	// Close gives the table up.
	Close() error
}

// Stats count a lookup join's work; safe for concurrent use.
type Stats struct {
	Lookups atomic.Int64 // keys looked up (rows with a NULL key are not)
	Hits    atomic.Int64 // lookups that found at least one row
	// Lookups answered by the per-job cache of an on-demand table, and
	// those passed on to the table's system.
	CacheHits, CacheMisses atomic.Int64
	// Round trips to an on-demand table's system.
	Fetches atomic.Int64
}

// cached is a Dim with a per-job cache.
type cached interface {
	CacheStats() (lookupcache.Stats, bool)
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

// Operator is a lookup join. It looks the keys of a whole input batch up
// at once (Dim.LookupBatch), so that a table larger than the CPU caches
// is read with many memory accesses in flight, and emits the joined rows
// in the order of the input.
type Operator struct {
	cfg     Config
	ctx     context.Context
	dim     Dim
	metrics *exec.Metrics
	out     *types.Batch

	// The keys of the batch being joined: flat holds them one after the
	// other, keys slices it, rowOf maps a key to its input row (rows with
	// a NULL key have none).
	flat  []types.Value
	keys  [][]types.Value
	rowOf []int

	// The join of the batch in: visit is a method value made once, so
	// that a batch allocates nothing. Rows before done are joined; cur is
	// the row whose dimension rows visit is being given, matched how many
	// of them joined.
	visitFn func(i int, row []types.Value) bool
	in      *types.Batch
	row     []types.Value
	done    int
	cur     int
	matched int
	hits    int64
	err     error

	cache lookupcache.Stats // the cache's counters when last reported
}

// New returns a lookup join operator.
func New(cfg Config) (*Operator, error) {
	if cfg.Open == nil || cfg.Next == nil || len(cfg.Key) == 0 {
		return nil, fmt.Errorf("lookup join: incomplete configuration")
	}
	if cfg.Stats == nil {
		cfg.Stats = &Stats{}
	}
	o := &Operator{cfg: cfg}
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

// flushAt is the output batch size at which rows are passed on.
const flushAt = 1024

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	if err := o.evalKeys(b); err != nil {
		return err
	}
	o.out.Reset()
	o.in, o.done, o.cur, o.matched, o.hits, o.err = b, 0, -1, 0, 0, nil
	defer func() { o.in = nil }()
	if len(o.keys) > 0 {
		if err := o.dim.LookupBatch(o.ctx, o.keys, o.visitFn); err != nil {
			return fmt.Errorf("lookup join: %w", err)
		}
	}
	if o.err == nil {
		o.advance(len(b.Rows))
	}
	lookups := int64(len(o.keys))
	o.cfg.Stats.Lookups.Add(lookups)
	o.cfg.Stats.Hits.Add(o.hits)
	if o.metrics != nil {
		o.metrics.Lookups.Add(lookups)
		o.metrics.LookupHits.Add(o.hits)
	}
	o.reportCache()
	if o.err != nil {
		return o.err
	}
	if len(o.out.Rows) == 0 {
		return nil
	}
	return o.cfg.Next.Process(o.out)
}

// reportCache adds what the dimension's cache did since the last report
// to the counters.
func (o *Operator) reportCache() {
	c, ok := o.dim.(cached)
	if !ok {
		return
	}
	st, ok := c.CacheStats()
	if !ok {
		return
	}
	hits, misses, fetches := st.Hits-o.cache.Hits, st.Misses-o.cache.Misses, st.Fetches-o.cache.Fetches
	o.cache = st
	o.cfg.Stats.CacheHits.Add(hits)
	o.cfg.Stats.CacheMisses.Add(misses)
	o.cfg.Stats.Fetches.Add(fetches)
	if o.metrics != nil {
		o.metrics.LookupCacheHits.Add(hits)
		o.metrics.LookupCacheMisses.Add(misses)
		o.metrics.LookupFetches.Add(fetches)
	}
}

// evalKeys computes the key of every row of b; a key with a NULL is left
// out: it matches nothing.
func (o *Operator) evalKeys(b *types.Batch) error {
	w := len(o.cfg.Key)
	o.flat, o.rowOf = o.flat[:0], o.rowOf[:0]
	for i := range b.Rows {
		vals := b.Rows[i].Vals
		null := false
		for j, f := range o.cfg.Key {
			v, err := f(vals)
			if err != nil {
				return fmt.Errorf("lookup join: cannot evaluate key %d: %w", j+1, err)
			}
			null = null || v.IsNull()
			o.flat = append(o.flat, v)
		}
		if null {
			o.flat = o.flat[:len(o.flat)-w]
			continue
		}
		o.rowOf = append(o.rowOf, i)
	}
	o.keys = o.keys[:0]
	for k := range o.rowOf {
		o.keys = append(o.keys, o.flat[k*w:(k+1)*w:(k+1)*w])
	}
	return nil
}

// visit joins dimension row d with the input row of key k.
func (o *Operator) visit(k int, d []types.Value) bool {
	if o.err != nil {
		return false
	}
	r := o.rowOf[k]
	if r != o.cur {
		if o.advance(r); o.err != nil {
			return false
		}
		o.cur, o.matched = r, 0
		o.hits++
		in := o.in.Rows[r].Vals
		w := len(in) + o.cfg.DimWidth
		if cap(o.row) < w {
			o.row = make([]types.Value, w)
		}
		o.row = o.row[:w]
		copy(o.row, in)
	}
	in := &o.in.Rows[r]
	copy(o.row[len(in.Vals):], d)
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
	origin := in.Origin
	if o.matched > 0 {
		origin = types.NoOrigin
	}
	vals := o.out.AddRow(in.Kind, origin, len(o.row))
	copy(vals, o.row)
	o.matched++
	o.flush()
	return true
}

// advance finishes the input rows before r: a row of a LEFT join that
// joined no dimension row is emitted padded with NULLs.
func (o *Operator) advance(r int) {
	for ; o.done < r && o.err == nil; o.done++ {
		if !o.cfg.Left || (o.done == o.cur && o.matched > 0) {
			continue
		}
		in := &o.in.Rows[o.done]
		vals := o.out.AddRow(in.Kind, in.Origin, len(in.Vals)+o.cfg.DimWidth)
		copy(vals, in.Vals) // the dimension's columns stay NULL
		o.flush()
	}
}

// flush passes the output on once it is large.
func (o *Operator) flush() {
	if len(o.out.Rows) < flushAt {
		return
	}
	if err := o.cfg.Next.Process(o.out); err != nil {
		o.err = err
	}
	o.out.Reset()
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
