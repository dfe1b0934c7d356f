package window

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// attachedAggregate aggregates rows that carry their window, as Flink's
// window-attached windowing does for a GROUP BY of window_start and
// window_end over the rows of a window aggregation (a cascaded window
// aggregation): a row counts in the window [row[StartCol],
// row[EndCol]) and in no other, whatever the window's kind, so windows
// are neither sliced nor merged. A window fires when the watermark
// reaches its last instant, end - 1 ms; a row whose window fired is late.
//
// Each window's entries are stored under its end and start
// ('w' + time(end) + time(start) + encoded key): the entry's key is its
// window's start followed by its grouping key, so that the entries of
// windows that share an end (sessions) never meet.
type attachedAggregate struct {
	aggBase

	startCol, endCol int
	windows          map[bounds]*attachedWindow
	cur              *attachedWindow // the window the last row went to
	freeMaps         []map[string]*entry

	// pending is the end of the earliest live window; math.MaxInt64
	// when there is none.
	pending int64
	fires   []*attachedWindow // scratch: the windows to fire
}

// bounds are a window's start and end.
type bounds struct{ start, end int64 }

// attachedWindow is the accumulators of one window, by encoded key.
type attachedWindow struct {
	bounds
	m map[string]*entry
}

func newAttachedAggregate(b aggBase) *attachedAggregate {
	return &attachedAggregate{
		aggBase:  b,
		startCol: b.cfg.StartCol,
		endCol:   b.cfg.EndCol,
		windows:  make(map[bounds]*attachedWindow),
		pending:  math.MaxInt64,
	}
}

// Open implements exec.Operator. It attaches the operator's store,
// restores the state of the last checkpoint, and opens downstream.
func (op *attachedAggregate) Open(ctx *exec.Context) error {
	if err := op.attach(ctx); err != nil {
		return err
	}
	if err := op.restore(); err != nil {
		return fmt.Errorf("cannot open %s: %w", op.name, err)
	}
	return op.next.Open(ctx)
}

// Process implements exec.Operator.
func (op *attachedAggregate) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		_, ok, err := op.admit(r)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		sv, ev := r.Vals[op.startCol], r.Vals[op.endCol]
		if sv.IsNull() || ev.IsNull() {
			return fmt.Errorf("%s: cannot aggregate a row without its window: window_start (column %d) or window_end (column %d) is NULL",
				op.name, op.startCol, op.endCol)
		}
		w := op.cur
		if at := (bounds{sv.Int(), ev.Int()}); w == nil || w.bounds != at {
			if w = op.windows[at]; w == nil {
				if op.isFired(at.end, op.wm) {
					op.late()
					continue
				}
				w = op.newWindow(at)
				op.pending = min(op.pending, at.end)
			}
			op.cur = w
		}
		if err := op.add(w, r.Vals); err != nil {
			return err
		}
	}
	return nil
}

// add folds row into the entry of its key in w.
func (op *attachedAggregate) add(w *attachedWindow, row []types.Value) error {
	key := appendTime(op.keyBuf[:0], w.start)
	for _, c := range op.keys {
		key = types.AppendKey(key, row[c])
	}
	op.keyBuf = key
	e := w.m[string(key)]
	if e == nil {
		k := string(key)
		e = op.newEntry(k, row)
		e.home = home{windowKey, w.end}
		w.m[k] = e
	}
	if err := e.group.Add(op.calls, row, op.scratch); err != nil {
		return fmt.Errorf("%s: cannot accumulate: %w", op.name, err)
	}
	if op.track && !e.dirty {
		op.touch(e)
	}
	return nil
}

func (op *attachedAggregate) newWindow(at bounds) *attachedWindow {
	var m map[string]*entry
	if n := len(op.freeMaps); n > 0 {
		m = op.freeMaps[n-1]
		op.freeMaps = op.freeMaps[:n-1]
	} else {
		m = make(map[string]*entry)
	}
	w := &attachedWindow{bounds: at, m: m}
	op.windows[at] = w
	return w
}

// freeWindow releases a window and its entries.
func (op *attachedAggregate) freeWindow(w *attachedWindow) {
	for _, e := range w.m {
		op.release(e)
	}
	clear(w.m)
	if len(op.freeMaps) < 64 {
		op.freeMaps = append(op.freeMaps, w.m)
	}
	w.m = nil
	delete(op.windows, w.bounds)
	if op.cur == w {
		op.cur = nil
	}
}

// Watermark implements exec.Operator: it fires every window whose last
// instant is at or before wm, by end, then start, then key, and forwards
// wm.
func (op *attachedAggregate) Watermark(wm int64) error {
	if wm > op.wm && !op.ended {
		if wm == exec.MaxWatermark {
			op.markEnd()
		}
		if err := op.fire(wm); err != nil {
			return err
		}
		if wm == exec.MaxWatermark {
			op.ended = true
		}
	}
	return op.next.Watermark(max(wm, op.wm))
}

// Finish implements exec.Operator. Input that ends without a MaxWatermark
// is treated as ended all the same: every window still open fires first,
// unless the job is being stopped.
func (op *attachedAggregate) Finish() error {
	if !op.ended && !op.stopping() {
		op.markEnd()
		if err := op.fire(exec.MaxWatermark); err != nil {
			return err
		}
		op.ended = true
	}
	return op.next.Finish()
}

// Close implements exec.Operator.
func (op *attachedAggregate) Close() error {
	op.windows, op.cur, op.free, op.freeMaps, op.fires = nil, nil, nil, nil, nil
	return op.next.Close()
}

// fire emits and frees the windows that wm completes.
func (op *attachedAggregate) fire(wm int64) error {
	op.wm = wm
	if !op.isFired(op.pending, wm) {
		return nil
	}
	due := op.fires[:0]
	for _, w := range op.windows {
		if op.isFired(w.end, wm) {
			due = append(due, w)
		}
	}
	slices.SortFunc(due, func(x, y *attachedWindow) int {
		return cmp.Or(cmp.Compare(x.end, y.end), cmp.Compare(x.start, y.start))
	})
	for _, w := range due {
		for _, e := range op.sortEntries(w.m) {
			if err := op.emit(w.start, w.end, e); err != nil {
				return err
			}
		}
		op.freeWindow(w)
	}
	clear(due)
	op.fires = due[:0]
	op.updatePending()
	return op.flush()
}

func (op *attachedAggregate) updatePending() {
	p := int64(math.MaxInt64)
	for _, w := range op.windows {
		p = min(p, w.end)
	}
	op.pending = p
}

// markEnd records, as the input ends, the last instant of the last window
// that will fire: the watermark a checkpoint records from then on.
func (op *attachedAggregate) markEnd() {
	last := op.wm
	for _, w := range op.windows {
		last = max(last, w.end-maxTimestampGap)
	}
	op.endMark = last
}

// Checkpoint implements exec.Checkpointer: it writes the entries changed
// since the last checkpoint, deletes those of fired windows, writes the
// watermark, and completes the store's checkpoint. Without a state backend
// it does nothing.
func (op *attachedAggregate) Checkpoint() error {
	if op.store == nil {
		return nil
	}
	if err := op.checkpoint(); err != nil {
		return fmt.Errorf("cannot checkpoint %s: %w", op.name, err)
	}
	return nil
}

func (op *attachedAggregate) checkpoint() error {
	if err := op.deleteRemoved(); err != nil {
		return err
	}
	if op.track {
		for i, e := range op.dirty {
			if e.dirty {
				if err := op.putEntry(e); err != nil {
					return err
				}
			}
			op.dirty[i] = nil
		}
	} else {
		for _, w := range op.windows {
			for _, e := range w.m {
				if err := op.putEntry(e); err != nil {
					return err
				}
			}
		}
	}
	op.dirty = op.dirty[:0]
	op.track = true
	return op.endCheckpoint(0)
}

// restore loads the state of the last checkpoint: the watermark and the
// open windows' entries.
func (op *attachedAggregate) restore() error {
	ok, err := op.restoreMeta()
	if err != nil || !ok {
		return err
	}
	err = scanAll(op.store, windowKey, func(key, val []byte) error {
		if len(key) < 17 || len(val) == 0 || val[0] != stateVersion {
			return errCorrupt
		}
		e, rest, err := op.decodeEntry(string(key[9:]), val[1:])
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			op.release(e)
			return errCorrupt
		}
		at := bounds{start: readTime(key[9:17]), end: readTime(key[1:9])}
		e.home, e.stored = home{windowKey, at.end}, true
		w := op.windows[at]
		if w == nil {
			w = op.newWindow(at)
		}
		w.m[e.key] = e
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot restore windows: %w", err)
	}
	op.updatePending()
	op.track = true
	return nil
}
