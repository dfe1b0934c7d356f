package window

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// AggregateConfig configures a window aggregate: GROUP BY Keys,
// window_start, window_end over a window TVF described by Spec.
type AggregateConfig struct {
	// ID is the operator's stable ID: its state store and its replay
	// offsets live under it.
	ID string
	// Spec is the window TVF.
	Spec Spec
	// TimeCol is the input column holding the event time (a TIMESTAMP or
	// TIMESTAMP_LTZ value, microseconds since the epoch); -1 when
	// Attached.
	TimeCol int
	// Attached aggregates rows that carry their window, as Flink's
	// window-attached windowing: each row counts in the window
	// [row[StartCol], row[EndCol]) (TIMESTAMP values) and in no other, so
	// that Spec only describes the windows. The rows of a window
	// aggregation, a window Top-N or a window join carry theirs.
	Attached         bool
	StartCol, EndCol int
	// Keys are the input columns of the grouping key, in output order.
	Keys []int
	// PartitionKeys are the SESSION ... PARTITION BY columns (input
	// indexes); they must be a subset of Keys. Sessions are tracked per
	// partition key; accumulators per full key inside a session. Nil means
	// sessions per full key. Only SESSION takes them.
	PartitionKeys []int
	// Calls are the aggregate calls, in output order.
	Calls []agg.Call
	// Zone is the session time zone, in which windows over a
	// TIMESTAMP_LTZ time attribute (Spec.LTZ) are aligned; nil is UTC.
	Zone *time.Location
	// Next receives the output rows.
	Next exec.Operator
}

// NewAggregate returns a window aggregate operator. Its output rows are
// append-only (+I): the Keys columns in order, then window_start,
// window_end and window_time (TIMESTAMP(3) values; window_time is
// window_end - 1 ms, or with Spec.LTZ the TIMESTAMP_LTZ instant of that
// wall-clock time in the Zone), then one value per call. A window's rows
// are emitted once, when a watermark reaches the window's last instant.
func NewAggregate(cfg AggregateConfig) (exec.Operator, error) {
	name := "window aggregate " + strconv.Quote(cfg.ID)
	if err := cfg.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("cannot build %s: %w", name, err)
	}
	if cfg.Next == nil {
		return nil, fmt.Errorf("cannot build %s: no downstream operator", name)
	}
	switch {
	case cfg.Attached && (cfg.StartCol < 0 || cfg.EndCol < 0):
		return nil, fmt.Errorf("cannot build %s: negative window bound column %d or %d", name, cfg.StartCol, cfg.EndCol)
	case cfg.Attached && cfg.TimeCol >= 0:
		return nil, fmt.Errorf("cannot build %s: rows that carry their window are not assigned one by time column %d", name, cfg.TimeCol)
	case cfg.Attached && cfg.PartitionKeys != nil:
		return nil, fmt.Errorf("cannot build %s: rows that carry their window take no partition keys", name)
	case !cfg.Attached && cfg.TimeCol < 0:
		return nil, fmt.Errorf("cannot build %s: negative time column %d", name, cfg.TimeCol)
	}
	for _, k := range cfg.Keys {
		if k < 0 {
			return nil, fmt.Errorf("cannot build %s: negative key column %d", name, k)
		}
	}
	for i, c := range cfg.Calls {
		if c.Func == nil {
			return nil, fmt.Errorf("cannot build %s: call %d has no function", name, i)
		}
		for _, a := range c.Args {
			if a < 0 {
				return nil, fmt.Errorf("cannot build %s: %s has a negative argument column %d", name, c.Func.Name(), a)
			}
		}
	}
	if cfg.PartitionKeys != nil {
		if cfg.Spec.Kind != Session {
			return nil, fmt.Errorf("cannot build %s: %s windows take no partition keys", name, cfg.Spec.Kind)
		}
		for _, p := range cfg.PartitionKeys {
			if !slices.Contains(cfg.Keys, p) {
				return nil, fmt.Errorf("cannot build %s: partition column %d is not a grouping key", name, p)
			}
		}
	}
	// Window aggregates never retract (their input is insert-only), so
	// every call may use the cheaper append-only accumulators.
	cfg.Calls = slices.Clone(cfg.Calls)
	for i := range cfg.Calls {
		cfg.Calls[i].AppendOnly = true
	}
	b := newAggBase(cfg, name)
	if cfg.Attached {
		return newAttachedAggregate(b), nil
	}
	if cfg.Spec.Kind == Session {
		return newSessionAggregate(b), nil
	}
	return newSlicingAggregate(b), nil
}

// outBatchRows is how many output rows are collected before they are pushed
// downstream.
const outBatchRows = 1024

// maxFreeEntries bounds the pool of reset accumulator groups kept for reuse.
const maxFreeEntries = 1 << 16

// entry is the accumulators of one grouping key in one slice, window or
// session.
type entry struct {
	key   string        // the encoded key: the map key it is stored under
	vals  []types.Value // the key column values, in Keys order
	group agg.Group

	// Checkpoint bookkeeping of slicing aggregates, whose store holds one
	// record per entry. (A session's entries are stored with their
	// session.)
	home   home // the slice or CUMULATE window holding the entry
	dirty  bool // changed since the last Checkpoint, and listed in dirty
	stored bool // the store holds the entry under home and key
}

// home names the container of an entry in the store: a slice by its end,
// or the running accumulators of a CUMULATE window by its start.
type home struct {
	prefix byte // sliceKey or cumKey
	at     int64
}

// storedEntry is the store key of an entry that must be deleted at the next
// Checkpoint.
type storedEntry struct {
	home home
	key  string
}

// aggBase is what every window aggregate shares: input checks, replay
// dropping, the entry pool and output batching.
type aggBase struct {
	cfg     AggregateConfig
	name    string
	next    exec.Operator
	calls   []agg.Call
	keys    []int
	timeCol int
	maxCol  int // the largest input column read: rows must be wider

	store   state.Store // nil without a state backend
	offsets *state.Offsets
	metrics *exec.Metrics

	// zone aligns the windows of a TIMESTAMP_LTZ time attribute (nil:
	// UTC, or a TIMESTAMP one); ltz makes window_time a TIMESTAMP_LTZ.
	zone *Zone
	ltz  bool

	wm    int64 // the highest watermark seen
	ended bool  // everything has fired (MaxWatermark or Finish)
	// stopped reports a stop (see exec.Context.Stopping): a Finish then
	// fires nothing.
	stopped func() bool
	// endMark is, once ended, the last instant of the last window that
	// fired (or the last watermark before the end, if later). Checkpoints
	// record it instead of MaxWatermark, so that a job run again over a
	// grown input drops the rows of the windows it emitted and
	// aggregates the later ones.
	endMark int64

	keyBuf  []byte
	scratch []types.Value
	out     *types.Batch
	width   int
	free    []*entry
	sorted  []*entry
	live    int // entries handed out and not released

	// Checkpoint bookkeeping (see also sessionSet). track is set while
	// every entry changed since the last Checkpoint is listed in dirty
	// (once: its dirty flag is set); without it the next Checkpoint
	// writes every live entry. It starts unset, so that a job that never
	// checkpoints keeps no list, and is given up when the list outgrows
	// dirtyLimit(live). Sessions keep their entries in their own records.
	track   bool
	dirty   []*entry
	removed []storedEntry // stored entries released or moved since the last Checkpoint
	meta    metaState     // the meta record last written or restored
	fp      []byte        // the operator's fingerprint, kept in the meta record
	enc     []byte        // scratch: store values
	keyEnc  []byte        // scratch: store keys
	accEnc  []byte        // scratch: one accumulator's state
}

func newAggBase(cfg AggregateConfig, name string) aggBase {
	maxCol := cfg.TimeCol
	if cfg.Attached {
		maxCol = max(cfg.StartCol, cfg.EndCol)
	}
	for _, k := range cfg.Keys {
		maxCol = max(maxCol, k)
	}
	for _, c := range cfg.Calls {
		for _, a := range c.Args {
			maxCol = max(maxCol, a)
		}
		if c.Filter >= 0 {
			maxCol = max(maxCol, c.Filter)
		}
	}
	width := len(cfg.Keys) + 3 + len(cfg.Calls)
	return aggBase{
		cfg:     cfg,
		name:    name,
		next:    cfg.Next,
		calls:   cfg.Calls,
		keys:    cfg.Keys,
		timeCol: cfg.TimeCol,
		maxCol:  maxCol,
		wm:      exec.MinWatermark,
		scratch: make([]types.Value, max(agg.MaxArgs(cfg.Calls), 1)),
		out:     types.NewBatch(outBatchRows, width),
		width:   width,
		fp:      aggFingerprint(cfg),
		zone:    specZone(cfg.Spec, cfg.Zone),
		ltz:     cfg.Spec.LTZ,
	}
}

// attach attaches the operator's store and its offsets table.
// stopping reports whether the job is being stopped.
func (b *aggBase) stopping() bool { return b.stopped != nil && b.stopped() }

func (b *aggBase) attach(ctx *exec.Context) error {
	if ctx != nil {
		b.metrics = ctx.Metrics
		b.stopped = ctx.Stopped
	}
	return exec.OpenState(ctx, b.cfg.ID, b.name, &b.store, &b.offsets, nil)
}

// admit checks an input row and reports whether to fold it in, and its
// event time (0 when rows carry their window). Replays are dropped and
// counted here.
func (b *aggBase) admit(r *types.Row) (t int64, ok bool, err error) {
	if len(r.Vals) <= b.maxCol {
		return 0, false, fmt.Errorf("%s: cannot read column %d of a row of %d columns", b.name, b.maxCol, len(r.Vals))
	}
	if !r.Kind.IsAccumulate() {
		return 0, false, fmt.Errorf("%s: cannot aggregate a %s row: window aggregation takes insert-only input", b.name, r.Kind)
	}
	if !b.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
		b.metrics.Replayed()
		return 0, false, nil
	}
	if b.timeCol < 0 {
		return 0, true, nil
	}
	tv := r.Vals[b.timeCol]
	if tv.IsNull() {
		return 0, false, fmt.Errorf("%s: cannot assign a window to a row with a NULL time attribute (column %d)", b.name, b.timeCol)
	}
	if b.zone != nil {
		return b.zone.Local(tv.Int()), true, nil
	}
	return tv.Int(), true, nil
}

// isFired reports whether a window (or slice) ending at end has fired
// under watermark wm: its last instant is at or before wm.
func (b *aggBase) isFired(end, wm int64) bool { return b.zone.Fired(end, wm) }

func (b *aggBase) late() {
	if b.metrics != nil {
		b.metrics.LateRows.Add(1)
	}
}

// appendKey encodes the columns cols of row into b.keyBuf.
func (b *aggBase) appendKey(cols []int, row []types.Value) []byte {
	buf := b.keyBuf[:0]
	for _, c := range cols {
		buf = types.AppendKey(buf, row[c])
	}
	b.keyBuf = buf
	return buf
}

// newEntry returns an entry with empty accumulators for the key encoded
// as key, whose column values are read from row.
func (b *aggBase) newEntry(key string, row []types.Value) *entry {
	e := b.emptyEntry()
	e.key = key
	for i, c := range b.keys {
		e.vals[i] = row[c]
	}
	return e
}

// copyEntry returns a new entry for the same key as src, holding a copy of
// src's accumulators.
func (b *aggBase) copyEntry(src *entry) (*entry, error) {
	e := b.emptyEntry()
	e.key = src.key
	copy(e.vals, src.vals)
	if err := e.group.Merge(src.group); err != nil {
		b.release(e)
		return nil, fmt.Errorf("%s: cannot merge accumulators: %w", b.name, err)
	}
	return e, nil
}

func (b *aggBase) emptyEntry() *entry {
	b.live++
	if n := len(b.free); n > 0 {
		e := b.free[n-1]
		b.free = b.free[:n-1]
		return e
	}
	return &entry{vals: make([]types.Value, len(b.keys)), group: agg.NewGroup(b.calls)}
}

// release resets e and keeps it for reuse. A stored entry is deleted from
// the store at the next Checkpoint.
func (b *aggBase) release(e *entry) {
	b.live--
	if e.stored {
		b.removed = append(b.removed, storedEntry{e.home, e.key})
	}
	e.stored, e.dirty = false, false
	if len(b.free) >= maxFreeEntries {
		return
	}
	for _, a := range e.group {
		a.Reset()
	}
	clear(e.vals)
	e.key = ""
	b.free = append(b.free, e)
}

// sortEntries returns the entries of m sorted by encoded key, in a scratch
// slice valid until the next call.
func (b *aggBase) sortEntries(m map[string]*entry) []*entry {
	list := b.sorted[:0]
	for _, e := range m {
		list = append(list, e)
	}
	sortByKey(list)
	b.sorted = list
	return list
}

func sortByKey(list []*entry) {
	slices.SortFunc(list, func(x, y *entry) int { return strings.Compare(x.key, y.key) })
}

// emit appends the output row of e in window [start, end).
func (b *aggBase) emit(start, end int64, e *entry) error {
	vals := b.out.AddRow(types.Insert, types.NoOrigin, b.width)
	n := copy(vals, e.vals)
	vals[n] = types.TimestampValue(start)
	vals[n+1] = types.TimestampValue(end)
	vals[n+2] = windowTime(b.zone, b.ltz, end)
	if err := e.group.Results(vals[n+3:]); err != nil {
		return err
	}
	if b.out.Len() >= outBatchRows {
		return b.flush()
	}
	return nil
}

// flush pushes the pending output rows downstream.
func (b *aggBase) flush() error {
	if b.out.Len() == 0 {
		return nil
	}
	err := b.next.Process(b.out)
	b.out.Reset()
	return err
}
