package over

import (
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// Unbounded is Config.Preceding for UNBOUNDED PRECEDING.
const Unbounded int64 = -1

// Config configures an OVER aggregation.
type Config struct {
	// ID is the operator's stable identity (its state's).
	ID string
	// Partition are the PARTITION BY columns.
	Partition []int
	// TimeCol is the ORDER BY column: a time attribute.
	TimeCol int
	// ProcTime: TimeCol is a processing-time attribute; rows are emitted
	// as they arrive.
	ProcTime bool
	// Rows: a ROWS frame; else RANGE.
	Rows bool
	// Preceding is the start of the frame: for ROWS the number of rows
	// before the current one, for RANGE the time before the current row's
	// in microseconds; Unbounded for UNBOUNDED PRECEDING. The frame ends
	// at the current row.
	Preceding int64
	// Calls are the aggregates, over input columns.
	Calls []agg.Call
	// Types are the input's column types.
	Types []types.Type
	Next  exec.Operator
}

// partition is the state of one PARTITION BY key.
type partition struct {
	key string
	// pending are the rows not emitted yet (event time), in time order.
	pending queue
	// frame are the emitted rows still in the accumulators (bounded
	// frames), oldest first: only the columns the aggregates read.
	frame ring
	// first is the sequence number of the frame's first row: the frame's
	// rows are numbered as they come in.
	first  int64
	acc    agg.Group
	deques []deque // one per extreme call
	// last is the time of the newest emitted row.
	last    int64
	emitted bool
	// timer is when the partition's first pending row is due (see
	// Operator.timers), or noTimer; expiring says Operator.expiry holds
	// it.
	timer    int64
	expiring bool
	dirty    bool
}

const noTimer = exec.MinWatermark

// Operator is a running OVER aggregation.
type Operator struct {
	cfg     Config
	width   int // input columns
	nargs   int // columns of a frame row
	argCols []int
	// fcalls are the calls over a frame row that accumulators compute,
	// fresult the index of each one's result; extremes are the others.
	fcalls   []agg.Call
	fresult  []int
	extremes []extremeCall
	bounded  bool

	parts map[string]*partition
	dirty []string
	// timers is a heap of the partitions with pending rows, by the time
	// of the first one; an entry whose time is not its partition's timer
	// is stale (the partition got an earlier row, or none are pending).
	timers []timer
	// expiry holds the partitions with a RANGE frame, each once, roughly
	// in the order their frames expire (when the watermark passes their
	// newest row by more than the frame): one found expired is dropped,
	// one that got newer rows goes to the back.
	expiry  []expiring
	expHead int
	wm      int64
	// mark is what a checkpoint records as the watermark: after the end
	// of input (MaxWatermark) the newest time emitted, so that a job run
	// again over a grown input takes the rows after it.
	mark    int64
	ended   bool
	stopped func() bool

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics
	inCodec *rowcodec.Codec
	frCodec *rowcodec.Codec

	out     *types.Batch
	keyBuf  []byte
	scratch []types.Value
	results []types.Value
	accRes  []types.Value
	row     []types.Value // a frame row folded in at once (unbounded frames)
}

const outRows = 256

// New returns an OVER aggregation operator.
func New(cfg Config) (*Operator, error) {
	if cfg.TimeCol < 0 || cfg.TimeCol >= len(cfg.Types) {
		return nil, fmt.Errorf("over: time column %d out of %d columns", cfg.TimeCol, len(cfg.Types))
	}
	if cfg.Preceding < Unbounded {
		return nil, fmt.Errorf("over: bad frame start %d", cfg.Preceding)
	}
	if len(cfg.Calls) == 0 {
		return nil, errors.New("over: no aggregate calls")
	}
	o := &Operator{cfg: cfg, width: len(cfg.Types), parts: map[string]*partition{}, wm: exec.MinWatermark,
		mark: exec.MinWatermark, bounded: cfg.Preceding != Unbounded}
	// A frame row holds the columns the calls read, in a new order.
	pos := map[int]int{}
	col := func(c int) int {
		if c < 0 {
			return c
		}
		if c >= o.width {
			return -2
		}
		i, ok := pos[c]
		if !ok {
			i = len(o.argCols)
			pos[c] = i
			o.argCols = append(o.argCols, c)
		}
		return i
	}
	var frTypes []types.Type
	for ci, c := range cfg.Calls {
		fc := c
		fc.Args = make([]int, len(c.Args))
		for i, a := range c.Args {
			if fc.Args[i] = col(a); fc.Args[i] < 0 {
				return nil, fmt.Errorf("over: argument column %d out of %d columns", a, o.width)
			}
		}
		if fc.Filter = col(c.Filter); fc.Filter == -2 {
			return nil, fmt.Errorf("over: filter column %d out of %d columns", c.Filter, o.width)
		}
		if isMax, ok := isExtreme(c.Func.Name(), c.Distinct, len(c.Args)); ok && o.bounded {
			o.extremes = append(o.extremes, extremeCall{result: ci, col: fc.Args[0], filter: fc.Filter, max: isMax})
			continue
		}
		// An unbounded frame never retracts.
		fc.AppendOnly = !o.bounded
		o.fcalls = append(o.fcalls, fc)
		o.fresult = append(o.fresult, ci)
	}
	for _, c := range o.argCols {
		frTypes = append(frTypes, cfg.Types[c])
	}
	o.nargs = len(o.argCols)
	var err error
	if o.inCodec, err = rowcodec.New(cfg.Types); err != nil {
		return nil, fmt.Errorf("over: %w", err)
	}
	if o.frCodec, err = rowcodec.New(frTypes); err != nil {
		return nil, fmt.Errorf("over: %w", err)
	}
	o.scratch = make([]types.Value, max(agg.MaxArgs(o.fcalls), 1))
	o.results = make([]types.Value, len(cfg.Calls))
	o.accRes = make([]types.Value, len(o.fcalls))
	o.row = make([]types.Value, o.nargs)
	return o, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	o.out = types.NewBatch(outRows, o.width+len(o.results))
	if ctx != nil {
		o.metrics = ctx.Metrics
		o.stopped = ctx.Stopped
	}
	if err := exec.OpenState(ctx, o.cfg.ID, "OVER aggregation "+o.cfg.ID, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	return o.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if len(r.Vals) != o.width {
			return fmt.Errorf("over: a row of %d columns, want %d", len(r.Vals), o.width)
		}
		if !r.Kind.IsAccumulate() {
			return fmt.Errorf("over: cannot aggregate a %s row: OVER aggregation takes append-only input", r.Kind)
		}
		if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			o.metrics.Replayed()
			continue
		}
		tv := r.Vals[o.cfg.TimeCol]
		if tv.IsNull() {
			return fmt.Errorf("over: a row with a NULL time attribute (column %d)", o.cfg.TimeCol)
		}
		t := tv.Int()
		if !o.cfg.ProcTime && t <= o.wm {
			if o.metrics != nil {
				o.metrics.LateRows.Add(1)
			}
			continue
		}
		p := o.partition(r.Vals)
		o.touch(p)
		if o.cfg.ProcTime {
			// Emitted at once: the row is its own group of peers.
			q := &p.pending
			copy(q.push(t, o.width), r.Vals)
			if err := o.emit(p, t); err != nil {
				return err
			}
			o.watchExpiry(p)
			continue
		}
		copy(p.pending.insert(t, o.width), r.Vals)
		if p.timer == noTimer || t < p.timer {
			o.schedule(p, t)
		}
	}
	return o.flush()
}

func (o *Operator) flush() error {
	if len(o.out.Rows) == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}

// partition returns the partition of a row, created if new.
func (o *Operator) partition(vals []types.Value) *partition {
	o.keyBuf = o.keyBuf[:0]
	for _, c := range o.cfg.Partition {
		o.keyBuf = types.AppendKey(o.keyBuf, vals[c])
	}
	p := o.parts[string(o.keyBuf)]
	if p == nil {
		p = o.newPartition(string(o.keyBuf))
	}
	return p
}

func (o *Operator) newPartition(key string) *partition {
	p := &partition{key: key, acc: agg.NewGroup(o.fcalls), timer: noTimer}
	if len(o.extremes) > 0 {
		p.deques = make([]deque, len(o.extremes))
	}
	if o.cfg.Rows && o.bounded {
		p.frame.limit = int(o.cfg.Preceding) + 1
	}
	o.parts[key] = p
	return p
}

// touch marks p as changed since the last checkpoint.
func (o *Operator) touch(p *partition) {
	if !p.dirty && o.store != nil {
		p.dirty = true
		o.dirty = append(o.dirty, p.key)
	}
}

// emit emits the pending rows of p up to time upTo, in order, each with
// the aggregates over its frame.
func (o *Operator) emit(p *partition, upTo int64) error {
	q := &p.pending
	w := o.width
	for q.len() > 0 && q.ts[q.head] <= upTo {
		t := q.ts[q.head]
		n := 1 // the row, and for RANGE its peers
		if !o.cfg.Rows {
			for n < q.len() && q.ts[q.head+n] == t {
				n++
			}
		}
		if o.bounded && !o.cfg.Rows {
			// Rows more than Preceding before t leave the frame.
			if err := o.retractUntil(p, t-o.cfg.Preceding); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			if err := o.add(p, t, q.row(i, w)); err != nil {
				return err
			}
		}
		if err := o.frameResults(p); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			row := o.out.AddRow(types.Insert, types.NoOrigin, w+len(o.results))
			copy(row, q.row(i, w))
			copy(row[w:], o.results)
			if len(o.out.Rows) >= outRows {
				if err := o.flush(); err != nil {
					return err
				}
			}
		}
		q.pop(n, w)
		p.last, p.emitted = t, true
		if o.cfg.Rows && o.bounded && p.frame.len() > int(o.cfg.Preceding) {
			// Keep the last n rows: with the next row, its frame.
			if err := o.retractFirst(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// add folds a row into the accumulators, and keeps what the aggregates
// read of it while a bounded frame holds it.
func (o *Operator) add(p *partition, t int64, vals []types.Value) error {
	if !o.bounded {
		return o.addCols(p.acc, vals)
	}
	fr := p.frame.push(t, o.nargs)
	for i, c := range o.argCols {
		fr[i] = vals[c]
	}
	if err := p.acc.Add(o.fcalls, fr, o.scratch); err != nil {
		return fmt.Errorf("over: cannot accumulate: %w", err)
	}
	if len(o.extremes) > 0 {
		o.addExtremes(p, p.first+int64(p.frame.len()-1), fr)
	}
	return nil
}

// frameResults writes the results over p's frame into o.results.
func (o *Operator) frameResults(p *partition) error {
	if err := p.acc.Results(o.accRes); err != nil {
		return err
	}
	for i, r := range o.accRes {
		o.results[o.fresult[i]] = r
	}
	if len(o.extremes) > 0 {
		o.extremeResults(p)
	}
	return nil
}

// addCols adds an input row (unbounded frames keep no rows).
func (o *Operator) addCols(acc agg.Group, vals []types.Value) error {
	fr := o.row
	for i, c := range o.argCols {
		fr[i] = vals[c]
	}
	err := acc.Add(o.fcalls, fr, o.scratch)
	clear(fr)
	if err != nil {
		return fmt.Errorf("over: cannot accumulate: %w", err)
	}
	return nil
}

func (o *Operator) retractFirst(p *partition) error {
	if err := p.acc.Retract(o.fcalls, p.frame.row(0, o.nargs), o.scratch); err != nil {
		return fmt.Errorf("over: cannot retract: %w", err)
	}
	if len(o.extremes) > 0 {
		o.retractExtremes(p, p.first)
	}
	p.frame.pop(o.nargs)
	p.first++
	return nil
}

// retractUntil retracts the frame's rows before time t.
func (o *Operator) retractUntil(p *partition, t int64) error {
	f := &p.frame
	for f.len() > 0 && f.time(0) < t {
		if err := o.retractFirst(p); err != nil {
			return err
		}
	}
	return nil
}

// Watermark implements exec.Operator: partitions with rows up to wm emit
// them, expired RANGE frames are dropped, then the watermark goes on.
func (o *Operator) Watermark(wm int64) error {
	if wm <= o.wm {
		return nil
	}
	if err := o.advance(wm); err != nil {
		return err
	}
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Watermark(wm)
}

func (o *Operator) advance(wm int64) error {
	if wm == exec.MaxWatermark {
		o.mark = max(o.mark, o.wm)
		o.ended = true
	}
	o.wm = wm
	for len(o.timers) > 0 && o.timers[0].at <= wm {
		tm := o.popTimer()
		p := tm.p
		if p.timer != tm.at {
			continue // stale
		}
		p.timer = noTimer
		o.touch(p)
		if err := o.emit(p, wm); err != nil {
			return err
		}
		if o.ended && p.emitted {
			o.mark = max(o.mark, p.last)
		}
		if p.pending.len() > 0 {
			o.schedule(p, p.pending.ts[p.pending.head])
		}
		o.watchExpiry(p)
	}
	if !o.ended {
		o.expire()
	}
	return nil
}

// Finish implements exec.Operator: at the end of input every pending row
// is emitted; on a stop they stay in the state for the next run.
func (o *Operator) Finish() error {
	if (o.stopped == nil || !o.stopped()) && !o.ended {
		if err := o.advance(exec.MaxWatermark); err != nil {
			return err
		}
	}
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.parts, o.timers, o.expiry = nil, nil, nil
	return o.cfg.Next.Close()
}
