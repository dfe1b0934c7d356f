package groupagg

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Config configures a group aggregate.
type Config struct {
	// ID is the operator's stable ID: the name of its state store.
	ID string
	// Keys are the input columns grouped by; empty for a global aggregate.
	Keys []int
	// Calls are the aggregate calls, in output order.
	Calls []agg.Call
	// AppendOnlyInput declares that the input has only +I rows, so the
	// accumulators need keep no history for retraction.
	AppendOnlyInput bool
	// MiniBatchLatency, if positive, holds updates back across batches
	// ('table.exec.mini-batch.allow-latency'): keys changed since the last
	// emission emit once this long after the first change, or once
	// MiniBatchSize input rows are pending, or at a checkpoint barrier or
	// the end of input, whichever comes first.
	MiniBatchLatency time.Duration
	// MiniBatchSize bounds the input rows of a mini-batch
	// ('table.exec.mini-batch.size'); 0: no bound but the latency.
	MiniBatchSize int
	// TTL, if positive, forgets a key not updated for this long in
	// processing time, without output ('table.exec.state.ttl'), as Flink
	// does: a later row of the key starts a new group (+I).
	TTL time.Duration
	// Next receives the changelog of results.
	Next exec.Operator
}

// outBatchRows is the size at which an output batch is passed on.
const outBatchRows = 1024

// New returns a group aggregate operator.
func New(cfg Config) (exec.Operator, error) {
	switch {
	case cfg.Next == nil:
		return nil, errors.New("cannot build group aggregate: no downstream operator")
	case cfg.ID == "":
		return nil, errors.New("cannot build group aggregate: empty operator ID")
	}
	for _, k := range cfg.Keys {
		if k < 0 {
			return nil, fmt.Errorf("cannot build group aggregate %s: negative key column %d", cfg.ID, k)
		}
	}
	calls := make([]agg.Call, len(cfg.Calls))
	maxCol := -1
	for _, k := range cfg.Keys {
		maxCol = max(maxCol, k)
	}
	for i, c := range cfg.Calls {
		if c.Func == nil {
			return nil, fmt.Errorf("cannot build group aggregate %s: call %d has no function", cfg.ID, i+1)
		}
		if len(c.Args) != len(c.ArgTypes) {
			return nil, fmt.Errorf("cannot build group aggregate %s: call %d (%s) has %d arguments and %d argument types",
				cfg.ID, i+1, c.Func.Name(), len(c.Args), len(c.ArgTypes))
		}
		for _, a := range c.Args {
			if a < 0 {
				return nil, fmt.Errorf("cannot build group aggregate %s: call %d (%s) reads negative column %d",
					cfg.ID, i+1, c.Func.Name(), a)
			}
			maxCol = max(maxCol, a)
		}
		if c.Filter < -1 {
			return nil, fmt.Errorf("cannot build group aggregate %s: call %d (%s) has filter column %d",
				cfg.ID, i+1, c.Func.Name(), c.Filter)
		}
		maxCol = max(maxCol, c.Filter)
		c.AppendOnly = c.AppendOnly || cfg.AppendOnlyInput
		calls[i] = c
	}
	cfg.Keys = append([]int(nil), cfg.Keys...)
	cfg.Calls = calls
	return &operator{
		cfg:     cfg,
		maxCol:  maxCol,
		groups:  make(map[string]*group),
		scratch: make([]types.Value, max(agg.MaxArgs(calls), 1)),
		maker:   agg.NewMaker(calls),
		results: make([]types.Value, len(calls)),
		width:   len(cfg.Keys) + len(calls),
	}, nil
}

// group is the state of one key.
type group struct {
	key     string        // AppendKey encoding of the key values
	keyVals []types.Value // the key values, for output rows
	accs    agg.Group
	rows    int64         // input rows folded in minus rows retracted
	last    []types.Value // last emitted result; nil before the first (empty, not nil, without calls)
	written int64         // processing time (µs) of the last update, with a TTL
	touched bool          // in operator.touched (changed by this batch)
	dirty   bool          // in operator.dirty (changed since Checkpoint)
	removed bool          // forgotten: the row count reached zero
}

type operator struct {
	cfg    Config
	maxCol int

	groups  map[string]*group
	keyBuf  []byte
	scratch []types.Value
	results []types.Value
	touched []*group // groups this batch changed, in first-touch order

	// Checkpoint bookkeeping: groups changed and keys removed since the
	// last Checkpoint.
	dirty   []*group
	removed []string

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics

	// The size of the groups for the job's metrics: their estimated
	// bytes, and the gauge they are reported to between batches.
	stateBytes int64
	gauge      *exec.StateGauge

	out   *types.Batch
	width int

	maker     *agg.Maker
	groupSlab []group
	valueSlab []types.Value

	now func() int64 // processing time, µs

	// Mini-batch: input rows folded in since the last emission, and when
	// the batch must be emitted (µs).
	pending  int
	deadline int64

	// TTL: groups in the order they were last updated; an item whose
	// group was updated again since is stale.
	ttl     int64 // µs; 0: none
	expiry  []expiry
	expHead int
}

type expiry struct {
	g  *group
	at int64
}

// Open implements exec.Operator. It attaches the operator's store, restores
// the groups a previous Checkpoint left there, and opens downstream.
func (o *operator) Open(ctx *exec.Context) error {
	o.now = func() int64 { return time.Now().UnixMicro() }
	o.ttl = o.cfg.TTL.Microseconds()
	if ctx != nil && ctx.Now != nil {
		o.now = ctx.Now
	}
	if ctx != nil {
		o.metrics = ctx.Metrics
	}
	o.gauge = ctx.StateGauge("GROUP BY")
	if err := exec.OpenState(ctx, o.cfg.ID, "group aggregate "+o.cfg.ID, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	o.reportState()
	// The output batch grows as results come (its memory is then kept):
	// a task that emits little takes little, whatever the parallelism.
	o.out = types.NewBatch(0, 0)
	return o.cfg.Next.Open(ctx)
}

// Estimates for groupBytes: the struct, its map slot, and per aggregate
// call an accumulator and a value of the last result.
const (
	groupOverhead = int64(unsafe.Sizeof(group{})) + 48
	accBytes      = 64
)

// groupBytes estimates the memory of a group: accumulators that keep
// values (DISTINCT, LISTAGG, MIN and MAX with retractions) are counted at
// a fixed size.
func (o *operator) groupBytes(g *group) int64 {
	return groupOverhead + int64(len(g.key)) + types.ValuesSize(g.keyVals) +
		int64(len(o.cfg.Calls))*(accBytes+types.ValueSize)
}

// reportState sets the operator's gauge: the groups and their bytes.
func (o *operator) reportState() { o.gauge.Set(int64(len(o.groups)), o.stateBytes) }

// Process implements exec.Operator: it folds the batch in, then emits one
// update per key the batch changed (or, with a mini-batch, once the
// mini-batch is due).
func (o *operator) Process(b *types.Batch) error {
	var now int64
	if o.ttl > 0 || o.cfg.MiniBatchLatency > 0 {
		now = o.now()
	}
	for i := range b.Rows {
		if err := o.fold(&b.Rows[i], now); err != nil {
			return err
		}
	}
	defer o.reportState()
	if o.cfg.MiniBatchLatency <= 0 {
		return o.emit()
	}
	if o.pending == 0 && len(o.touched) > 0 {
		o.deadline = now + o.cfg.MiniBatchLatency.Microseconds()
	}
	o.pending += len(b.Rows)
	if (o.cfg.MiniBatchSize > 0 && o.pending >= o.cfg.MiniBatchSize) || now >= o.deadline {
		return o.emit()
	}
	return nil
}

// TickEvery implements exec.Timed: a mini-batch is checked for its
// deadline a few times per latency; a TTL about every second.
func (o *operator) TickEvery() time.Duration {
	var every time.Duration
	if o.cfg.MiniBatchLatency > 0 {
		every = max(o.cfg.MiniBatchLatency/4, time.Millisecond)
	}
	if o.cfg.TTL > 0 {
		t := min(max(o.cfg.TTL/10, 10*time.Millisecond), time.Second)
		if every == 0 || t < every {
			every = t
		}
	}
	return every
}

// Tick implements exec.Timed: it emits a mini-batch whose deadline passed
// and forgets expired keys.
func (o *operator) Tick() error {
	defer o.reportState()
	now := o.now()
	if o.pending > 0 && now >= o.deadline {
		if err := o.emit(); err != nil {
			return err
		}
	}
	o.expire(now)
	return nil
}

// expire forgets the keys not updated since now - TTL. Keys with an
// update not yet emitted are not expired.
func (o *operator) expire(now int64) {
	if o.ttl <= 0 {
		return
	}
	limit := now - o.ttl
	for o.expHead < len(o.expiry) && o.expiry[o.expHead].at < limit {
		x := o.expiry[o.expHead]
		o.expiry[o.expHead] = expiry{}
		o.expHead++
		g := x.g
		if g.written != x.at || g.removed || g.touched {
			continue // updated since, or gone
		}
		delete(o.groups, g.key)
		o.stateBytes -= o.groupBytes(g)
		g.removed = true
		o.removed = append(o.removed, g.key)
		if o.metrics != nil {
			o.metrics.ExpiredKeys.Add(1)
		}
	}
	if o.expHead > 1024 && o.expHead > len(o.expiry)/2 {
		o.expiry = append(o.expiry[:0], o.expiry[o.expHead:]...)
		o.expHead = 0
	}
}

// written notes that g was updated at now, for the TTL.
func (o *operator) written(g *group, now int64) {
	if o.ttl <= 0 || g.written == now {
		return
	}
	g.written = now
	o.expiry = append(o.expiry, expiry{g: g, at: now})
}

func (o *operator) fold(r *types.Row, now int64) error {
	if len(r.Vals) <= o.maxCol {
		return fmt.Errorf("group aggregate %s: cannot read column %d of a row of %d columns", o.cfg.ID, o.maxCol, len(r.Vals))
	}
	accumulate := r.Kind.IsAccumulate()
	if !accumulate && o.cfg.AppendOnlyInput {
		return fmt.Errorf("group aggregate %s: cannot retract a %s row: input declared append-only", o.cfg.ID, r.Kind)
	}
	if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
		o.metrics.Replayed()
		return nil
	}
	buf := o.keyBuf[:0]
	for _, k := range o.cfg.Keys {
		buf = types.AppendKey(buf, r.Vals[k])
	}
	o.keyBuf = buf
	g := o.groups[string(buf)]
	if accumulate {
		if g == nil {
			g = o.newGroup(string(buf), r.Vals)
		}
		g.rows++
		if err := g.accs.Add(o.cfg.Calls, r.Vals, o.scratch); err != nil {
			return fmt.Errorf("group aggregate %s: cannot accumulate row: %w", o.cfg.ID, err)
		}
	} else {
		if g == nil || g.rows <= 0 {
			return nil // nothing to retract from, as in Flink
		}
		g.rows--
		if g.rows == 0 {
			// The group is empty: start the next rows of the key from
			// fresh accumulators, as if the group had been removed.
			for _, a := range g.accs {
				a.Reset()
			}
		} else if err := g.accs.Retract(o.cfg.Calls, r.Vals, o.scratch); err != nil {
			return fmt.Errorf("group aggregate %s: cannot retract row: %w", o.cfg.ID, err)
		}
	}
	if !g.touched {
		g.touched = true
		o.touched = append(o.touched, g)
	}
	o.written(g, now)
	return nil
}

func (o *operator) newGroup(key string, row []types.Value) *group {
	g := o.allocGroup(key)
	for i, k := range o.cfg.Keys {
		g.keyVals[i] = row[k]
	}
	o.groups[key] = g
	o.stateBytes += o.groupBytes(g)
	return g
}

// allocGroup returns an empty group for key. Groups, their key values and
// accumulators are allocated a few at a time (agg.Maker): an aggregate
// over a stream of new keys (q17's auctions per day) would otherwise
// allocate a dozen small objects per key.
func (o *operator) allocGroup(key string) *group {
	if len(o.groupSlab) == 0 {
		o.groupSlab = make([]group, groupSlab)
	}
	g := &o.groupSlab[0]
	o.groupSlab = o.groupSlab[1:]
	g.key, g.keyVals, g.accs = key, o.values(len(o.cfg.Keys)), o.maker.New()
	return g
}

// values returns n zero values from the operator's value slab.
func (o *operator) values(n int) []types.Value {
	if o.valueSlab == nil || len(o.valueSlab) < n {
		o.valueSlab = make([]types.Value, max(n*groupSlab, 1))
	}
	v := o.valueSlab[:n:n]
	o.valueSlab = o.valueSlab[n:]
	return v
}

// groupSlab is how many groups allocGroup allocates at once: few, since a
// slab lives as long as any of its groups.
const groupSlab = 16

// emit sends one update per touched group and forgets emptied groups.
func (o *operator) emit() error {
	for i, g := range o.touched {
		o.touched[i] = nil
		g.touched = false
		if !g.dirty {
			g.dirty = true
			o.dirty = append(o.dirty, g)
		}
		if g.rows == 0 {
			if g.last != nil {
				if err := o.emitRow(types.Delete, g, g.last); err != nil {
					return err
				}
			}
			if o.groups[g.key] == g {
				delete(o.groups, g.key)
				o.stateBytes -= o.groupBytes(g)
			}
			g.removed = true
			o.removed = append(o.removed, g.key)
			continue
		}
		if err := g.accs.Results(o.results); err != nil {
			return err
		}
		switch {
		case g.last == nil:
			if err := o.emitRow(types.Insert, g, o.results); err != nil {
				return err
			}
			// Not nil even without calls (SELECT DISTINCT, UNION): nil
			// means "nothing emitted yet".
			g.last = append(o.values(len(o.results))[:0], o.results...)
		case !equalResults(g.last, o.results):
			if o.out.Len()+2 > outBatchRows { // keep the pair in one batch
				if err := o.flush(); err != nil {
					return err
				}
			}
			if err := o.emitRow(types.UpdateBefore, g, g.last); err != nil {
				return err
			}
			if err := o.emitRow(types.UpdateAfter, g, o.results); err != nil {
				return err
			}
			copy(g.last, o.results)
		}
	}
	o.touched = o.touched[:0]
	o.pending = 0
	return o.flush()
}

func (o *operator) emitRow(kind types.RowKind, g *group, results []types.Value) error {
	if o.out.Len() >= outBatchRows {
		if err := o.flush(); err != nil {
			return err
		}
	}
	vals := o.out.AddRow(kind, types.NoOrigin, o.width)
	n := copy(vals, g.keyVals)
	copy(vals[n:], results)
	return nil
}

func (o *operator) flush() error {
	if o.out.Len() == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}

func equalResults(a, b []types.Value) bool {
	for i := range a {
		if a[i].Kind() != b[i].Kind() || !types.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Watermark implements exec.Operator: the aggregate is not event-time
// driven, so the watermark passes through.
func (o *operator) Watermark(wm int64) error { return o.cfg.Next.Watermark(wm) }

// Finish implements exec.Operator: it emits a pending mini-batch.
func (o *operator) Finish() error {
	defer o.reportState()
	if err := o.emit(); err != nil {
		return err
	}
	return o.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (o *operator) Close() error { return o.cfg.Next.Close() }
