package window

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// AssignConfig configures a window TVF evaluated on its own (SELECT * FROM
// TABLE(TUMBLE(...)) and the like, feeding window joins and window top-N).
type AssignConfig struct {
	Spec Spec
	// TimeCol is the input column holding the event time.
	TimeCol int
	// PartitionKeys are the SESSION ... PARTITION BY columns; nil means
	// one session sequence over all rows. Only SESSION takes them.
	PartitionKeys []int
	// ID is the stable operator ID under which a SESSION assigner keeps
	// its state and replay offsets; without one it keeps them in memory
	// only. The other kinds keep no state and ignore it.
	ID string
	// Zone is the session time zone, in which windows over a
	// TIMESTAMP_LTZ time attribute (Spec.LTZ) are aligned; nil is UTC.
	Zone *time.Location
	// Next receives the output rows.
	Next exec.Operator
}

// NewAssign returns an operator that appends window_start, window_end and
// window_time (TIMESTAMP(3); window_time = window_end - 1 ms, or with
// Spec.LTZ the TIMESTAMP_LTZ instant of that wall-clock time in the Zone)
// to each input row, once per window the row belongs to.
//
// TUMBLE, HOP and CUMULATE rows are emitted right away, in input order and,
// for one row, in window order; late rows are not dropped (as in Flink,
// where only the operators after the TVF drop late data). A row that maps
// to one window keeps its kind and origin. Rows copied into several windows
// get no origin: one source offset in several rows would make the next
// stateful operator drop all but the first as replays.
//
// SESSION buffers the rows of each partition key until the watermark closes
// their session, then emits them with the session bounds, sessions in order
// of end, start and partition key, the rows of a session in arrival order.
// Rows whose session has already closed are late: they are dropped and
// counted in Metrics.LateRows. Buffered rows must be inserts; emitted rows
// carry no origin since they leave in another order than they came.
func NewAssign(cfg AssignConfig) (exec.Operator, error) {
	name := "window assigner " + strconv.Quote(cfg.ID)
	if err := cfg.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("cannot build %s: %w", name, err)
	}
	if cfg.Next == nil {
		return nil, fmt.Errorf("cannot build %s: no downstream operator", name)
	}
	if cfg.TimeCol < 0 {
		return nil, fmt.Errorf("cannot build %s: negative time column %d", name, cfg.TimeCol)
	}
	maxCol := cfg.TimeCol
	for _, p := range cfg.PartitionKeys {
		if p < 0 {
			return nil, fmt.Errorf("cannot build %s: negative partition column %d", name, p)
		}
		maxCol = max(maxCol, p)
	}
	if cfg.PartitionKeys != nil && cfg.Spec.Kind != Session {
		return nil, fmt.Errorf("cannot build %s: %s windows take no partition keys", name, cfg.Spec.Kind)
	}
	base := assignBase{cfg: cfg, name: name, maxCol: maxCol, out: types.NewBatch(outBatchRows, 0), zone: specZone(cfg.Spec, cfg.Zone)}
	if cfg.Spec.Kind == Session {
		op := &sessionAssign{assignBase: base, wm: exec.MinWatermark, fp: assignFingerprint(cfg)}
		op.set = newSessionSet(cfg.Spec.Gap, base.zone, mergeRows)
		return op, nil
	}
	return &alignedAssign{assignBase: base}, nil
}

type assignBase struct {
	cfg     AssignConfig
	name    string
	maxCol  int
	metrics *exec.Metrics
	out     *types.Batch
	// zone aligns the windows of a TIMESTAMP_LTZ time attribute (nil:
	// UTC, or a TIMESTAMP one).
	zone *Zone
}

// time reads the event time of r: with a Zone, its wall-clock time there.
func (a *assignBase) time(r *types.Row) (int64, error) {
	if len(r.Vals) <= a.maxCol {
		return 0, fmt.Errorf("%s: cannot read column %d of a row of %d columns", a.name, a.maxCol, len(r.Vals))
	}
	tv := r.Vals[a.cfg.TimeCol]
	if tv.IsNull() {
		return 0, fmt.Errorf("%s: cannot assign a window to a row with a NULL time attribute (column %d)", a.name, a.cfg.TimeCol)
	}
	if a.zone != nil {
		return a.zone.Local(tv.Int()), nil
	}
	return tv.Int(), nil
}

// emit appends row extended with the window [start, end).
func (a *assignBase) emit(kind types.RowKind, origin types.Origin, row []types.Value, start, end int64) error {
	vals := a.out.AddRow(kind, origin, len(row)+3)
	n := copy(vals, row)
	vals[n] = types.TimestampValue(start)
	vals[n+1] = types.TimestampValue(end)
	vals[n+2] = windowTime(a.zone, a.cfg.Spec.LTZ, end)
	if a.out.Len() >= outBatchRows {
		return a.flush()
	}
	return nil
}

func (a *assignBase) flush() error {
	if a.out.Len() == 0 {
		return nil
	}
	err := a.cfg.Next.Process(a.out)
	a.out.Reset()
	return err
}

// alignedAssign assigns TUMBLE, HOP and CUMULATE windows: a pure function
// of each row's time.
type alignedAssign struct{ assignBase }

// Open implements exec.Operator.
func (a *alignedAssign) Open(ctx *exec.Context) error { return a.cfg.Next.Open(ctx) }

// Process implements exec.Operator.
func (a *alignedAssign) Process(b *types.Batch) error {
	s := a.cfg.Spec
	for i := range b.Rows {
		r := &b.Rows[i]
		t, err := a.time(r)
		if err != nil {
			return err
		}
		switch s.Kind {
		case Tumble:
			start := alignedStart(t, s.Offset, s.Size)
			err = a.emit(r.Kind, r.Origin, r.Vals, start, start+s.Size)
		case Hop:
			origin := r.Origin
			if s.Size != s.Slide {
				origin = types.NoOrigin
			}
			last := alignedStart(t, s.Offset, s.Slide)
			for start := last - s.Size + s.Slide; start <= last && err == nil; start += s.Slide {
				err = a.emit(r.Kind, origin, r.Vals, start, start+s.Size)
			}
		case Cumulate:
			origin := r.Origin
			if s.Size != s.Step {
				origin = types.NoOrigin
			}
			start := alignedStart(t, s.Offset, s.Size)
			first := alignedStart(t, s.Offset, s.Step) + s.Step
			for end := first; end <= start+s.Size && err == nil; end += s.Step {
				err = a.emit(r.Kind, origin, r.Vals, start, end)
			}
		}
		if err != nil {
			return err
		}
	}
	return a.flush()
}

// Watermark implements exec.Operator.
func (a *alignedAssign) Watermark(wm int64) error { return a.cfg.Next.Watermark(wm) }

// Finish implements exec.Operator.
func (a *alignedAssign) Finish() error { return a.cfg.Next.Finish() }

// Close implements exec.Operator.
func (a *alignedAssign) Close() error { return a.cfg.Next.Close() }

// sessionAssign buffers rows per session until the session fires.
type sessionAssign struct {
	assignBase
	store   state.Store // nil without a state backend or an ID
	offsets *state.Offsets
	wm      int64
	ended   bool
	stopped func() bool // a stop, not an end: Finish fires nothing
	endMark int64       // once ended: the last instant of the last session emitted
	seq     int64       // the seq of the last buffered row
	keyBuf  []byte
	set     *sessionSet[[]bufferedRow]
	fired   []*session[[]bufferedRow]

	// Checkpoint bookkeeping. The store holds every buffered row whose seq
	// is at most storedSeq. While track is set, fresh lists the rows
	// buffered since (seqs storedSeq+1, storedSeq+2, ...) and gone marks
	// those that fired before the next checkpoint; without it the next
	// checkpoint looks for new rows in every session.
	buffered  int // rows buffered now
	storedSeq int64
	track     bool
	fresh     []bufferedRow
	gone      []bool
	removed   []int64 // seqs of stored rows that fired
	meta      metaState
	fp        []byte
	enc       []byte
	keyEnc    []byte
}

type bufferedRow struct {
	seq  int64 // arrival order
	kind types.RowKind
	vals []types.Value
}

func mergeRows(dst, src *[]bufferedRow) error {
	*dst = append(*dst, *src...)
	*src = nil
	return nil
}

func newRows(*[]bufferedRow) {}

// Open implements exec.Operator.
func (a *sessionAssign) Open(ctx *exec.Context) error {
	if ctx != nil {
		a.metrics = ctx.Metrics
		a.stopped = ctx.Stopped
	}
	if err := exec.OpenState(ctx, a.cfg.ID, a.name, &a.store, &a.offsets, nil); err != nil {
		return err
	}
	if err := a.restore(); err != nil {
		return fmt.Errorf("cannot open %s: %w", a.name, err)
	}
	return a.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (a *sessionAssign) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		t, err := a.time(r)
		if err != nil {
			return err
		}
		if !r.Kind.IsAccumulate() {
			return fmt.Errorf("%s: cannot buffer a %s row: SESSION windows take insert-only input", a.name, r.Kind)
		}
		if !a.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			a.metrics.Replayed()
			continue
		}
		buf := a.keyBuf[:0]
		for _, c := range a.cfg.PartitionKeys {
			buf = types.AppendKey(buf, r.Vals[c])
		}
		a.keyBuf = buf
		s, err := a.set.add(buf, t, a.wm, newRows)
		if err != nil {
			return err
		}
		if s == nil {
			if a.metrics != nil {
				a.metrics.LateRows.Add(1)
			}
			continue
		}
		a.seq++
		br := bufferedRow{seq: a.seq, kind: r.Kind, vals: slices.Clone(r.Vals)}
		s.data = append(s.data, br)
		a.buffered++
		if a.track {
			a.keep(br)
		}
	}
	return nil
}

// Watermark implements exec.Operator: it emits the rows of every session
// that wm closes, then forwards wm.
func (a *sessionAssign) Watermark(wm int64) error {
	if wm > a.wm && !a.ended {
		if wm == exec.MaxWatermark {
			a.endMark = max(a.wm, a.set.lastInstant())
		}
		a.wm = wm
		if err := a.fire(wm); err != nil {
			return err
		}
		if wm == exec.MaxWatermark {
			a.ended = true
		}
	}
	return a.cfg.Next.Watermark(max(wm, a.wm))
}

// Finish implements exec.Operator. Input that ends without a MaxWatermark
// is treated as ended all the same: every open session is emitted first.
func (a *sessionAssign) Finish() error {
	if !a.ended && (a.stopped == nil || !a.stopped()) {
		a.endMark = max(a.wm, a.set.lastInstant())
		a.wm = exec.MaxWatermark
		if err := a.fire(exec.MaxWatermark); err != nil {
			return err
		}
		a.ended = true
	}
	return a.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (a *sessionAssign) Close() error {
	a.set, a.fired = nil, nil
	return a.cfg.Next.Close()
}

func (a *sessionAssign) fire(wm int64) error {
	if !a.set.pending(wm) {
		return nil
	}
	a.fired = a.set.fire(wm, a.fired[:0])
	for _, s := range a.fired {
		rows := s.data
		slices.SortFunc(rows, func(x, y bufferedRow) int { return cmp.Compare(x.seq, y.seq) })
		for _, r := range rows {
			if err := a.emit(r.kind, types.NoOrigin, r.vals, s.start, s.end); err != nil {
				return err
			}
			a.forget(r.seq)
		}
		a.buffered -= len(rows)
		s.data = nil
	}
	clear(a.fired)
	return a.flush()
}
