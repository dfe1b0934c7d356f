package windowrank

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// outBatchRows is how many output rows are collected before they are pushed
// downstream.
const outBatchRows = 1024

// maxFree bounds the pool of partitions kept for reuse.
const maxFree = 1 << 16

// Config configures a window Top-N.
type Config struct {
	// ID is the operator's stable ID: its state store and its replay
	// offsets live under it.
	ID string
	// Start and End are the input columns of window_start and window_end.
	Start, End int
	// Partition are the other PARTITION BY columns.
	Partition []int
	// Order is the ORDER BY.
	Order []rank.SortKey
	// Type is the numbering function.
	Type rank.Type
	// Limit is N: rows numbered up to N are emitted.
	Limit int
	// First, if above 1, is the lowest number emitted (rn BETWEEN First
	// AND Limit).
	First int
	// LaterFirst ranks, of rows that tie, the later arrival first (keep
	// the last row: deduplication ordered by time descending).
	LaterFirst bool
	// Types are the input's column types.
	Types []types.Type
	// Zone, if set, is the session time zone whose wall-clock times the
	// window bounds are (windows over a TIMESTAMP_LTZ time attribute): a
	// window fires when the watermark reaches the instant of its last
	// millisecond there (window.Zone). Nil: the bounds are instants.
	Zone *time.Location
	// Next receives the output rows: each input row followed by its number
	// (BIGINT).
	Next exec.Operator
}

type winKey struct{ start, end int64 }

// win is one window's partitions.
type win struct {
	key   winKey
	parts map[string]*part
}

// part is the rows kept for one partition of one window.
type part struct {
	key  string
	win  winKey
	n    int           // rows kept
	vals []types.Value // the n rows, width values each, in rank order
	// groups is, for DENSE_RANK, the number of distinct sort keys of the
	// rows.
	groups int

	// Checkpoint bookkeeping.
	dirty  bool // changed since the last Checkpoint, and listed in dirty
	stored bool // the store holds the partition
}

// Operator is a running window Top-N.
type Operator struct {
	cfg   Config
	name  string
	width int
	wins  map[winKey]*win
	last  *win // the window of the last row, a cache
	free  []*part

	wm      int64        // the highest watermark seen
	zone    *window.Zone // the wall-clock zone of the window bounds (nil: UTC)
	ended   bool         // every window has fired (MaxWatermark or Finish)
	endMark int64        // once ended: the last instant of the last window fired
	stopped func() bool

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics

	// Checkpoint bookkeeping: the partitions changed since the last
	// checkpoint (while track is set), the store keys to delete, and the
	// meta record last written.
	live    int
	dirty   []*part
	track   bool
	removed [][]byte
	meta    meta
	fp      []byte
	codec   *rowcodec.Codec
	encoder *rowcodec.Encoder
	enc     []byte
	keyEnc  []byte

	maxCol int
	keyBuf []byte
	firing []*win
	sorted []*part
	out    *types.Batch
}

// New returns a window Top-N operator.
func New(cfg Config) (*Operator, error) {
	name := "window Top-N " + strconv.Quote(cfg.ID)
	if cfg.Limit < 1 {
		return nil, fmt.Errorf("cannot build %s: the rank needs a bound (N >= 1)", name)
	}
	if cfg.Next == nil {
		return nil, fmt.Errorf("cannot build %s: no downstream operator", name)
	}
	width := len(cfg.Types)
	cols := append([]int{cfg.Start, cfg.End}, cfg.Partition...)
	for _, k := range cfg.Order {
		cols = append(cols, k.Col)
	}
	maxCol := 0
	for _, c := range cols {
		if c < 0 || c >= width {
			return nil, fmt.Errorf("cannot build %s: column %d is not one of the row's %d columns", name, c, width)
		}
		maxCol = max(maxCol, c)
	}
	codec, err := rowcodec.New(cfg.Types)
	if err != nil {
		return nil, fmt.Errorf("cannot build %s: %w", name, err)
	}
	return &Operator{
		cfg:     cfg,
		name:    name,
		width:   width,
		wins:    map[winKey]*win{},
		wm:      exec.MinWatermark,
		fp:      fingerprint(cfg),
		codec:   codec,
		encoder: codec.NewEncoder(),
		maxCol:  maxCol,
		out:     types.NewBatch(outBatchRows, width+1),
		zone:    window.NewZone(cfg.Zone),
	}, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	if ctx != nil {
		o.metrics = ctx.Metrics
		o.stopped = ctx.Stopped
	}
	if err := exec.OpenState(ctx, o.cfg.ID, o.name, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	return o.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if len(r.Vals) <= o.maxCol {
			return fmt.Errorf("%s: cannot read column %d of a row of %d columns", o.name, o.maxCol, len(r.Vals))
		}
		if !r.Kind.IsAccumulate() {
			return fmt.Errorf("%s: cannot rank a %s row: window Top-N takes insert-only input", o.name, r.Kind)
		}
		if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			o.metrics.Replayed()
			continue
		}
		sv, ev := r.Vals[o.cfg.Start], r.Vals[o.cfg.End]
		if sv.IsNull() || ev.IsNull() {
			return fmt.Errorf("%s: a row has a NULL window bound", o.name)
		}
		k := winKey{sv.Int(), ev.Int()}
		if o.zone.Fired(k.end, o.wm) {
			if o.metrics != nil {
				o.metrics.LateRows.Add(1)
			}
			continue
		}
		w := o.last
		if w == nil || w.key != k {
			if w = o.wins[k]; w == nil {
				w = &win{key: k, parts: map[string]*part{}}
				o.wins[k] = w
			}
			o.last = w
		}
		buf := o.keyBuf[:0]
		for _, c := range o.cfg.Partition {
			buf = types.AppendKey(buf, r.Vals[c])
		}
		o.keyBuf = buf
		p := w.parts[string(buf)]
		if p == nil {
			p = o.newPart(string(buf), k)
			w.parts[p.key] = p
		}
		if o.insert(p, r.Vals) && o.track && !p.dirty {
			o.touch(p)
		}
	}
	return nil
}

func (o *Operator) newPart(key string, w winKey) *part {
	o.live++
	if n := len(o.free); n > 0 {
		p := o.free[n-1]
		o.free = o.free[:n-1]
		p.key, p.win = key, w
		return p
	}
	return &part{key: key, win: w}
}

// release drops p; a stored partition is deleted at the next checkpoint.
func (o *Operator) release(p *part) {
	o.live--
	if p.stored {
		o.removed = append(o.removed, o.partKey(nil, p))
	}
	clear(p.vals[:p.n*o.width])
	p.n, p.groups, p.key, p.dirty, p.stored = 0, 0, "", false, false
	if len(o.free) < maxFree {
		o.free = append(o.free, p)
	}
}

func (o *Operator) row(p *part, i int) []types.Value {
	return p.vals[i*o.width : (i+1)*o.width]
}

func (o *Operator) compare(a, b []types.Value) int { return rank.Compare(o.cfg.Order, a, b) }

// insert adds row to p if it can still be emitted, and reports whether p
// changed.
func (o *Operator) insert(p *part, row []types.Value) bool {
	// pos: where the row goes, after the rows it ties with (before them
	// with LaterFirst). Partitions are short: scan from the end. after:
	// the row ranks strictly after the one before pos.
	pos, after := p.n, false
	for pos > 0 {
		c := o.compare(row, o.row(p, pos-1))
		if c > 0 || c == 0 && !o.cfg.LaterFirst {
			after = c > 0
			break
		}
		pos--
	}
	limit := o.cfg.Limit
	switch o.cfg.Type {
	case rank.RowNumber:
		if pos >= limit {
			return false
		}
	case rank.Standard, rank.Dense:
		// lo: how many rows rank strictly before it.
		lo := pos
		for !after && lo > 0 && o.compare(o.row(p, lo-1), row) == 0 {
			lo--
		}
		if o.cfg.Type == rank.Standard && lo >= limit {
			return false
		}
		if o.cfg.Type == rank.Dense && lo >= limit {
			g := p.groups
			if lo < p.n {
				g = o.groups(p, lo)
			}
			if g >= limit {
				return false
			}
		}
	}
	w := o.width
	need := (p.n + 1) * w
	if cap(p.vals) < need {
		grown := make([]types.Value, need, max(need, (limit+1)*w, 2*cap(p.vals)))
		copy(grown, p.vals[:p.n*w])
		p.vals = grown
	}
	p.vals = p.vals[:need]
	copy(p.vals[(pos+1)*w:need], p.vals[pos*w:p.n*w])
	copy(p.vals[pos*w:(pos+1)*w], row)
	p.n++
	if o.cfg.Type == rank.Dense {
		tie := pos > 0 && o.compare(row, o.row(p, pos-1)) == 0 ||
			pos+1 < p.n && o.compare(row, o.row(p, pos+1)) == 0
		if !tie {
			p.groups++
		}
	}
	o.trim(p)
	return pos < p.n
}

// groups counts the distinct sort keys among the first n rows of p.
func (o *Operator) groups(p *part, n int) int {
	g := 0
	for i := range n {
		if i == 0 || o.compare(o.row(p, i), o.row(p, i-1)) != 0 {
			g++
		}
	}
	return g
}

// trim drops the rows of p that can no longer be emitted.
func (o *Operator) trim(p *part) {
	limit, n := o.cfg.Limit, p.n
	if n <= limit {
		return
	}
	switch o.cfg.Type {
	case rank.RowNumber:
		n = limit
	case rank.Standard:
		// Rows tied with the N-th rank N or better.
		n = limit
		for n < p.n && o.compare(o.row(p, n), o.row(p, limit-1)) == 0 {
			n++
		}
	case rank.Dense:
		g := 1
		for i := 1; i < p.n; i++ {
			if o.compare(o.row(p, i), o.row(p, i-1)) != 0 {
				if g++; g > limit {
					n, g = i, limit
					break
				}
			}
		}
		p.groups = g
	}
	clear(p.vals[n*o.width : p.n*o.width])
	p.n = n
	p.vals = p.vals[:n*o.width]
}

// Watermark implements exec.Operator: it emits the windows wm closes, then
// forwards wm.
func (o *Operator) Watermark(wm int64) error {
	if wm > o.wm && !o.ended {
		if wm == exec.MaxWatermark {
			o.endMark = max(o.wm, o.lastInstant())
		}
		o.wm = wm
		if err := o.fire(wm); err != nil {
			return err
		}
		if wm == exec.MaxWatermark {
			o.ended = true
		}
	}
	return o.cfg.Next.Watermark(max(wm, o.wm))
}

// lastInstant is the last instant of the last open window.
func (o *Operator) lastInstant() int64 {
	t := exec.MinWatermark
	for k := range o.wins {
		t = max(t, o.zone.Last(k.end))
	}
	return t
}

// Finish implements exec.Operator. Input that ends without a MaxWatermark
// is treated as ended all the same, unless the job is being stopped.
func (o *Operator) Finish() error {
	if !o.ended && (o.stopped == nil || !o.stopped()) {
		o.endMark = max(o.wm, o.lastInstant())
		o.wm = exec.MaxWatermark
		if err := o.fire(exec.MaxWatermark); err != nil {
			return err
		}
		o.ended = true
	}
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.wins, o.last, o.free = nil, nil, nil
	return o.cfg.Next.Close()
}

// fire emits and drops every window whose last instant is at or before wm.
func (o *Operator) fire(wm int64) error {
	list := o.firing[:0]
	for k, w := range o.wins {
		if o.zone.Fired(k.end, wm) {
			list = append(list, w)
		}
	}
	if len(list) == 0 {
		return nil
	}
	slices.SortFunc(list, func(x, y *win) int {
		if c := cmp.Compare(x.key.end, y.key.end); c != 0 {
			return c
		}
		return cmp.Compare(x.key.start, y.key.start)
	})
	for _, w := range list {
		parts := o.sorted[:0]
		for _, p := range w.parts {
			parts = append(parts, p)
		}
		slices.SortFunc(parts, func(x, y *part) int { return strings.Compare(x.key, y.key) })
		for _, p := range parts {
			if err := o.emit(p); err != nil {
				return err
			}
			o.release(p)
		}
		clear(parts)
		o.sorted = parts[:0]
		delete(o.wins, w.key)
		if o.last == w {
			o.last = nil
		}
	}
	clear(list)
	o.firing = list[:0]
	return o.flush()
}

// emit appends the rows of p, numbered.
func (o *Operator) emit(p *part) error {
	num := 0
	for i := range p.n {
		row := o.row(p, i)
		switch {
		case o.cfg.Type == rank.RowNumber:
			num = i + 1
		case i > 0 && o.compare(row, o.row(p, i-1)) == 0:
			// A tie keeps the number.
		case o.cfg.Type == rank.Standard:
			num = i + 1
		default:
			num++
		}
		if num < o.cfg.First {
			continue
		}
		vals := o.out.AddRow(types.Insert, types.NoOrigin, o.width+1)
		copy(vals, row)
		vals[o.width] = types.BigIntValue(int64(num))
		if o.out.Len() >= outBatchRows {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *Operator) flush() error {
	if o.out.Len() == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}
