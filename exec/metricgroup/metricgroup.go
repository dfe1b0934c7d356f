// Package metricgroup runs a metric group (plan.MetricGroup): per key, the
// current value of each metric over its window, updated with every row in
// arrival order and appended to it, checkpointed with the job, and
// published once committed.
//
// Windows follow the rows' event time (or processing time), each key
// with a clock of its own: the newest time folded in. A row is folded
// into a window it still belongs to; one too old for a metric's window
// (a tumbling window of the key already replaced, a frame it has left) is
// left out of that metric and counted late. The value a row carries:
//
//   - no window: every row of the key so far;
//   - TUMBLE(size): the rows of the key's current window, [k·size,
//     (k+1)·size) around its clock;
//   - HOP(slide, size): the rows of the hopping window that ends at the
//     next slide boundary after the key's clock (the latest window that
//     holds it), kept as size/slide panes;
//   - SESSION(gap): the rows of the key's current session (rows less
//     than gap apart);
//   - LAST(length): the rows in [clock-length, clock], as an OVER RANGE
//     frame, rows leaving it retracted.
package metricgroup

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Window is a metric's window (plan.MetricWindow): Kind "", "TUMBLE",
// "HOP", "SESSION" or "LAST"; Size and Slide in microseconds.
type Window struct {
	Kind        string
	Size, Slide int64
}

func (w Window) String() string { return fmt.Sprintf("%s/%d/%d", w.Kind, w.Size, w.Slide) }

// Metric is one metric of the group.
type Metric struct {
	Name string
	// Call is the metric's aggregate in Config.Calls.
	Call   int
	Window Window
	// Computes identifies what the metric computes: its state is kept
	// across versions of the group while it is unchanged.
	Computes string
}

// Change is the committed value of a key's metrics.
type Change struct {
	// Key holds the KEY BY values.
	Key []types.Value
	// Values holds one value a metric, in the group's order.
	Values []types.Value
	// EventTime is the time of the newest row of the key, microseconds.
	EventTime int64
	// Deleted: the key's state expired (its windows hold no row), and its
	// values with it.
	Deleted bool
}

// Publisher receives the values of a group's metrics as checkpoints
// commit them (without checkpoints: as rows are folded in): the engine's
// metric store. Each task of the operator calls Define as it opens (with
// the same definition: it must be idempotent), then Publish from the
// task that runs it; a change's values are in the order of metrics.
type Publisher interface {
	Define(group string, version int, keys, metrics []types.Column) error
	Publish(group string, changes []Change) error
}

// Config configures a metric group operator.
type Config struct {
	// ID is the operator's stable identity (its state's).
	ID      string
	Group   string
	Version int
	Keys    []int
	// KeyNames name the key columns, for the publisher.
	KeyNames []string
	// TimeCol is the rowtime column; -1: processing time.
	TimeCol int
	Calls   []agg.Call
	Metrics []Metric
	// Types are the input's column types.
	Types     []types.Type
	Publisher Publisher
	Next      exec.Operator
}

// frame is the state layout of the metrics that share a window: their
// calls are folded in together.
type frame struct {
	win   Window
	calls []int // into Config.Calls, each once
	// fps are the calls' identities (Metric.Computes without the window).
	fps []string
	// nargs is the width of a LAST frame's row: each call's arguments
	// (and filter), in call order; at[i] is where call i's start.
	nargs int
	at    []int
	sub   []agg.Call // the calls over a frame row (LAST) or input row
	panes int        // HOP: size/slide
	// ext says which calls of a LAST frame are MIN (-1) or MAX (+1),
	// kept in deques; extremes: some are.
	ext      []int8
	extremes bool
}

// Operator is a running metric group.
type Operator struct {
	cfg    Config
	width  int
	frames []frame
	// result[m] is metric m's frame and its call's place in it.
	result []struct{ frame, call int }
	names  []string

	keys map[string]*keyState
	// horizon is the widest window, or 0 if a metric has none (keys
	// never expire); scanned is when keys were last scanned for expiry.
	horizon, scanned int64
	// rows counts the LAST frames' rows, for the state gauge; keyBytes
	// and rowBytes estimate the size of a key and of a row.
	rows               int64
	keyBytes, rowBytes int64
	gauge              *exec.StateGauge
	dirty              []*keyState // changed since the last checkpoint
	fresh              []*keyState // changed since the last publication
	// pending are the changes a barrier took, waiting for their
	// checkpoint to complete.
	pending []pendingPub
	checkpt bool

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics
	now     func() int64

	out     *types.Batch
	keyBuf  []byte
	scratch []types.Value
	vals    []types.Value
	frow    []types.Value
}

type pendingPub struct {
	id      int64
	changes []Change
}

const outRows = 256

// New returns a metric group operator.
func New(cfg Config) (*Operator, error) {
	if len(cfg.Metrics) == 0 {
		return nil, errors.New("metricgroup: no metrics")
	}
	if cfg.TimeCol >= len(cfg.Types) {
		return nil, fmt.Errorf("metricgroup: time column %d out of %d columns", cfg.TimeCol, len(cfg.Types))
	}
	o := &Operator{cfg: cfg, width: len(cfg.Types), keys: map[string]*keyState{}}
	byWin := map[Window]int{}
	for _, m := range cfg.Metrics {
		if m.Call < 0 || m.Call >= len(cfg.Calls) {
			return nil, fmt.Errorf("metricgroup: metric %s has call %d of %d", m.Name, m.Call, len(cfg.Calls))
		}
		fi, ok := byWin[m.Window]
		if !ok {
			fi = len(o.frames)
			byWin[m.Window] = fi
			f := frame{win: m.Window}
			if f.win.Kind == "HOP" {
				if f.win.Slide <= 0 || f.win.Size%f.win.Slide != 0 {
					return nil, fmt.Errorf("metricgroup: HOP size %d is not a multiple of slide %d", f.win.Size, f.win.Slide)
				}
				f.panes = int(f.win.Size / f.win.Slide)
			}
			o.frames = append(o.frames, f)
		}
		f := &o.frames[fi]
		ci := -1
		for i, c := range f.calls {
			if c == m.Call {
				ci = i
			}
		}
		if ci < 0 {
			ci = len(f.calls)
			f.calls = append(f.calls, m.Call)
			f.fps = append(f.fps, callPart(m.Computes))
		}
		o.result = append(o.result, struct{ frame, call int }{fi, ci})
		o.names = append(o.names, m.Name)
	}
	maxArgs := 1
	for fi := range o.frames {
		f := &o.frames[fi]
		for _, c := range f.calls {
			call := cfg.Calls[c]
			for _, a := range call.Args {
				if a < 0 || a >= o.width {
					return nil, fmt.Errorf("metricgroup: argument column %d out of %d columns", a, o.width)
				}
			}
			if call.Filter >= o.width {
				return nil, fmt.Errorf("metricgroup: filter column %d out of %d columns", call.Filter, o.width)
			}
			if f.win.Kind != "LAST" {
				f.sub = append(f.sub, call)
				continue
			}
			// Over a frame row: the call's arguments, then its filter.
			sc := call
			f.at = append(f.at, f.nargs)
			sc.Args = make([]int, len(call.Args))
			for i := range call.Args {
				sc.Args[i] = f.nargs
				f.nargs++
			}
			if call.Filter >= 0 {
				sc.Filter = f.nargs
				f.nargs++
			}
			f.sub = append(f.sub, sc)
			e := extremeOf(call.Func.Name(), len(call.Args))
			f.ext = append(f.ext, e)
			f.extremes = f.extremes || e != 0
		}
		maxArgs = max(maxArgs, agg.MaxArgs(f.sub), f.nargs)
	}
	o.scratch = make([]types.Value, maxArgs)
	o.frow = make([]types.Value, maxArgs)
	o.vals = make([]types.Value, len(cfg.Metrics))
	o.scanned = math.MinInt64
	o.keyBytes = 160 + 48*int64(len(cfg.Keys))
	for fi := range o.frames {
		f := &o.frames[fi]
		switch f.win.Kind {
		case "":
			o.horizon = -1
		case "HOP":
			o.keyBytes += int64(f.panes) * 64 * int64(len(f.calls))
		case "LAST":
			o.rowBytes += 48 + 48*int64(f.nargs)
		}
		o.keyBytes += 96 + 64*int64(len(f.calls))
		if o.horizon >= 0 {
			o.horizon = max(o.horizon, f.win.Size)
		}
	}
	return o, nil
}

// callPart is a metric's Computes without its window (the last word).
func callPart(computes string) string {
	for i := len(computes) - 1; i >= 0; i-- {
		if computes[i] == ' ' {
			return computes[:i]
		}
	}
	return computes
}

// Open implements exec.Operator: it restores the last checkpoint, and
// publishes what it restored (a store rebuilt on another instance).
func (o *Operator) Open(ctx *exec.Context) error {
	o.out = types.NewBatch(outRows, o.width+len(o.cfg.Metrics))
	o.now = func() int64 { return time.Now().UnixMicro() }
	if ctx != nil {
		o.metrics = ctx.Metrics
		o.checkpt = ctx.Checkpoints
		if ctx.Now != nil {
			o.now = ctx.Now
		}
	}
	if err := exec.OpenState(ctx, o.cfg.ID, "metric group "+o.cfg.Group, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	o.gauge = ctx.StateGauge("metric group")
	o.gauge.Set(int64(len(o.keys)), o.stateBytes())
	if p := o.cfg.Publisher; p != nil {
		keys := make([]types.Column, len(o.cfg.Keys))
		for i, c := range o.cfg.Keys {
			keys[i] = types.Column{Name: fmt.Sprintf("k%d", i), Type: o.cfg.Types[c].WithoutTimeAttr()}
			if i < len(o.cfg.KeyNames) {
				keys[i].Name = o.cfg.KeyNames[i]
			}
		}
		metrics := make([]types.Column, len(o.cfg.Metrics))
		for i, m := range o.cfg.Metrics {
			metrics[i] = types.Column{Name: m.Name, Type: o.cfg.Calls[m.Call].Result}
		}
		if err := p.Define(o.cfg.Group, o.cfg.Version, keys, metrics); err != nil {
			return fmt.Errorf("metric group %s: cannot define it in the metric store: %w", o.cfg.Group, err)
		}
	}
	if len(o.keys) > 0 {
		all := make([]*keyState, 0, len(o.keys))
		for _, k := range o.keys {
			all = append(all, k)
		}
		if err := o.publish(o.changes(all)); err != nil {
			return err
		}
	}
	return o.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	now := int64(0)
	if o.cfg.TimeCol < 0 {
		now = o.now()
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if len(r.Vals) != o.width {
			return fmt.Errorf("metric group %s: a row of %d columns, want %d", o.cfg.Group, len(r.Vals), o.width)
		}
		if !r.Kind.IsAccumulate() {
			return fmt.Errorf("metric group %s: cannot fold a %s row in: a metric group takes append-only input", o.cfg.Group, r.Kind)
		}
		if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			o.metrics.Replayed()
			continue
		}
		t := now
		if o.cfg.TimeCol >= 0 {
			tv := r.Vals[o.cfg.TimeCol]
			if tv.IsNull() {
				return fmt.Errorf("metric group %s: a row with a NULL time attribute (column %d)", o.cfg.Group, o.cfg.TimeCol)
			}
			t = tv.Int()
		}
		k := o.key(r.Vals)
		if err := o.fold(k, t, r.Vals); err != nil {
			return fmt.Errorf("metric group %s: %w", o.cfg.Group, err)
		}
		row := o.out.AddRow(types.Insert, types.NoOrigin, o.width+len(o.vals))
		copy(row, r.Vals)
		copy(row[o.width:], o.vals)
		if len(o.out.Rows) >= outRows {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
	if err := o.flush(); err != nil {
		return err
	}
	if o.cfg.TimeCol < 0 {
		o.expire(now)
	}
	return o.publishFresh()
}

// publishFresh publishes the values changed since the last publication,
// for a job without checkpoints (with them, their checkpoint does).
func (o *Operator) publishFresh() error {
	if o.checkpt || len(o.fresh) == 0 {
		return nil
	}
	ch := o.changes(o.fresh)
	o.fresh = o.fresh[:0]
	return o.publish(ch)
}

func (o *Operator) flush() error {
	if len(o.out.Rows) == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}

// key returns the state of a row's key, created if new.
func (o *Operator) key(vals []types.Value) *keyState {
	o.keyBuf = o.keyBuf[:0]
	for _, c := range o.cfg.Keys {
		o.keyBuf = types.AppendKey(o.keyBuf, vals[c])
	}
	k := o.keys[string(o.keyBuf)]
	if k == nil {
		k = o.newKey(string(o.keyBuf))
		k.vals = make([]types.Value, len(o.cfg.Keys))
		for i, c := range o.cfg.Keys {
			k.vals[i] = vals[c]
		}
	}
	return k
}

// touch marks k as changed since the last checkpoint and publication.
func (o *Operator) touch(k *keyState) {
	if !k.dirty {
		k.dirty = true
		o.dirty = append(o.dirty, k)
	}
	if !k.fresh {
		k.fresh = true
		o.fresh = append(o.fresh, k)
	}
}

// changes takes the current values of keys, and clears their fresh marks.
func (o *Operator) changes(keys []*keyState) []Change {
	out := make([]Change, 0, len(keys))
	for _, k := range keys {
		k.fresh = false
		if k.gone {
			out = append(out, Change{Key: k.vals, EventTime: k.clock, Deleted: true})
			continue
		}
		if err := o.results(k); err != nil {
			continue // as the rows carried it: the error failed the row
		}
		out = append(out, Change{Key: k.vals, Values: append([]types.Value(nil), o.vals...), EventTime: k.clock})
	}
	return out
}

func (o *Operator) publish(changes []Change) error {
	if o.cfg.Publisher == nil || len(changes) == 0 {
		return nil
	}
	if err := o.cfg.Publisher.Publish(o.cfg.Group, changes); err != nil {
		return fmt.Errorf("metric group %s: cannot publish its values: %w", o.cfg.Group, err)
	}
	return nil
}

// Watermark implements exec.Operator: metrics follow each key's clock,
// and the watermark goes on.
func (o *Operator) Watermark(wm int64) error {
	if o.cfg.TimeCol >= 0 && wm != exec.MaxWatermark {
		o.expire(wm)
		if err := o.publishFresh(); err != nil {
			return err
		}
	}
	return o.cfg.Next.Watermark(wm)
}

// expire lets go of the keys whose every window is past: the key's clock
// is more than the widest window (the horizon) behind time now. A row of
// such a key would find every window of its metrics empty, so nothing
// changes but memory; the store learns that the key has no values. Keys
// are scanned when now has moved a quarter of the horizon since the last
// scan. A group with a metric over every row (no WINDOW) keeps its keys.
func (o *Operator) expire(now int64) {
	if o.horizon <= 0 || now < o.scanned+o.horizon/4 {
		return
	}
	o.scanned = now
	for key, k := range o.keys {
		if k.clock < now-o.horizon {
			delete(o.keys, key)
			k.gone = true
			o.rows -= k.rows()
			o.touch(k)
		}
	}
	o.gauge.Set(int64(len(o.keys)), o.stateBytes())
}

// stateBytes estimates the bytes of the keys' state.
func (o *Operator) stateBytes() int64 {
	return int64(len(o.keys))*o.keyBytes + o.rows*o.rowBytes
}

// Finish implements exec.Operator.
func (o *Operator) Finish() error {
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.keys, o.dirty, o.fresh, o.pending = nil, nil, nil, nil
	return o.cfg.Next.Close()
}
