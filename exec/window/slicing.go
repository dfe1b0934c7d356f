package window

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// slicingAggregate aggregates TUMBLE, HOP and CUMULATE windows over
// slices, as Flink's slicing window operator does. Time is cut into
// disjoint slices (a TUMBLE window, a HOP slide, a CUMULATE step); a row
// is folded into the accumulators of its (slice, key) only, so each row
// costs one accumulator update whatever the number of windows it belongs
// to. Windows are assembled from slices when they fire:
//
//   - TUMBLE: the window is its one slice.
//   - HOP: the window is the merge of its size/slide slices. A slice is
//     freed once the last window holding it fired.
//   - CUMULATE: each max-size window keeps a running accumulator per key;
//     when the window ending at a slice's end fires, the slice is merged
//     into the running accumulators and freed, and every key of the
//     running accumulators is emitted. The running state is freed with
//     the max window.
type slicingAggregate struct {
	aggBase

	cumulate  bool
	size      int64 // window size (CUMULATE: max size)
	sliceSize int64 // slide, step, or size for TUMBLE
	offset    int64
	nSlices   int64 // slices per (max) window

	slices   map[int64]*slice
	cur      *slice               // the slice the last row went to
	cums     map[int64]*cumWindow // CUMULATE: max windows by start
	freeMaps []map[string]*entry

	// pending is the end of the earliest window that may still fire;
	// math.MaxInt64 when nothing is pending.
	pending int64

	fires  []int64 // scratch: window ends to fire
	cfires []cumFire
	merged map[string]*entry // scratch: a HOP window's merged entries
}

// slice is the accumulators of one slice, by encoded key.
type slice struct {
	end int64
	m   map[string]*entry
}

// cumWindow is one CUMULATE max window [start, start+size): the running
// accumulators of the slices fired so far.
type cumWindow struct {
	start   int64
	nextK   int64 // the next window to fire ends at start + nextK*step
	running map[string]*entry
	order   []*entry // running's entries; sorted by key when !dirty
	dirty   bool
}

type cumFire struct {
	end int64
	c   *cumWindow
}

func newSlicingAggregate(b aggBase) *slicingAggregate {
	s := b.cfg.Spec
	op := &slicingAggregate{
		aggBase: b,
		size:    s.Size,
		offset:  s.Offset,
		slices:  make(map[int64]*slice),
		pending: math.MaxInt64,
		merged:  make(map[string]*entry),
	}
	switch s.Kind {
	case Tumble:
		op.sliceSize = s.Size
	case Hop:
		op.sliceSize = s.Slide
	case Cumulate:
		op.sliceSize = s.Step
		op.cumulate = true
		op.cums = make(map[int64]*cumWindow)
	}
	op.nSlices = op.size / op.sliceSize
	return op
}

// Open implements exec.Operator. It attaches the operator's store,
// restores the state of the last checkpoint, and opens downstream.
func (op *slicingAggregate) Open(ctx *exec.Context) error {
	if err := op.attach(ctx); err != nil {
		return err
	}
	if err := op.restore(); err != nil {
		return fmt.Errorf("cannot open %s: %w", op.name, err)
	}
	return op.next.Open(ctx)
}

// Process implements exec.Operator.
func (op *slicingAggregate) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		t, ok, err := op.admit(r)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		sliceEnd := alignedStart(t, op.offset, op.sliceSize) + op.sliceSize
		s := op.cur
		if s == nil || s.end != sliceEnd {
			var m map[string]*entry
			if s, m = op.target(t, sliceEnd); s == nil {
				if m == nil {
					op.late()
					continue
				}
				// A CUMULATE row whose slice already fired: it
				// goes to the running accumulators of its max
				// window, which later windows still include.
				if err := op.add(m, op.cumHome(t), r.Vals); err != nil {
					return err
				}
				continue
			}
			op.cur = s
		}
		if err := op.add(s.m, home{sliceKey, s.end}, r.Vals); err != nil {
			return err
		}
	}
	return nil
}

// add folds row into the entry of its key in m, whose entries live at h.
func (op *slicingAggregate) add(m map[string]*entry, h home, row []types.Value) error {
	key := op.appendKey(op.keys, row)
	e := m[string(key)]
	if e == nil {
		k := string(key)
		e = op.newEntry(k, row)
		e.home = h
		m[k] = e
	}
	if err := e.group.Add(op.calls, row, op.scratch); err != nil {
		return fmt.Errorf("%s: cannot accumulate: %w", op.name, err)
	}
	if op.track && !e.dirty {
		op.touch(e)
	}
	return nil
}

// cumHome is where the running accumulators of the CUMULATE window holding
// t are stored.
func (op *slicingAggregate) cumHome(t int64) home {
	return home{cumKey, alignedStart(t, op.offset, op.size)}
}

// target finds where a row at t, in the slice ending at sliceEnd, goes
// when it is not the current slice: a live slice, or (CUMULATE) the
// running accumulators of a max window whose slice already fired, or
// nowhere when every window the row belongs to has fired (late).
func (op *slicingAggregate) target(t, sliceEnd int64) (*slice, map[string]*entry) {
	if s := op.slices[sliceEnd]; s != nil {
		return s, nil
	}
	if !op.cumulate {
		// Flink drops a row only when the last window of its slice
		// fired; otherwise it still counts in the windows that did not.
		lastEnd := sliceEnd - op.sliceSize + op.size
		if op.isFired(lastEnd, op.wm) {
			return nil, nil
		}
		s := op.newSlice(sliceEnd)
		e := sliceEnd
		for op.isFired(e, op.wm) {
			e += op.sliceSize
		}
		op.pending = min(op.pending, e)
		return s, nil
	}
	start := alignedStart(t, op.offset, op.size)
	if op.isFired(start+op.size, op.wm) {
		return nil, nil
	}
	c := op.cums[start]
	if c == nil {
		c = &cumWindow{start: start, nextK: 1, running: op.newMap()}
		op.cums[start] = c
	}
	// Skip the windows that the watermark passed while they were empty
	// (nothing was pending for them, so they were not visited): the row
	// must not count in them.
	for op.isFired(start+c.nextK*op.sliceSize, op.wm) {
		c.nextK++
	}
	if op.isFired(sliceEnd, op.wm) {
		op.pending = min(op.pending, start+c.nextK*op.sliceSize)
		return nil, c.running
	}
	op.pending = min(op.pending, sliceEnd)
	return op.newSlice(sliceEnd), nil
}

func (op *slicingAggregate) newSlice(end int64) *slice {
	s := &slice{end: end, m: op.newMap()}
	op.slices[end] = s
	return s
}

func (op *slicingAggregate) newMap() map[string]*entry {
	if n := len(op.freeMaps); n > 0 {
		m := op.freeMaps[n-1]
		op.freeMaps = op.freeMaps[:n-1]
		return m
	}
	return make(map[string]*entry)
}

func (op *slicingAggregate) freeMap(m map[string]*entry) {
	clear(m)
	if len(op.freeMaps) < 64 {
		op.freeMaps = append(op.freeMaps, m)
	}
}

// freeSlice releases a slice and its entries.
func (op *slicingAggregate) freeSlice(s *slice) {
	for _, e := range s.m {
		op.release(e)
	}
	op.freeMap(s.m)
	delete(op.slices, s.end)
	if op.cur == s {
		op.cur = nil
	}
}

// Watermark implements exec.Operator: it fires every window whose last
// instant is at or before wm, in order of window end, then forwards wm.
func (op *slicingAggregate) Watermark(wm int64) error {
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
// is treated as ended all the same: every window still open fires first.
func (op *slicingAggregate) Finish() error {
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
func (op *slicingAggregate) Close() error {
	op.slices, op.cums, op.cur, op.free, op.freeMaps = nil, nil, nil, nil, nil
	return op.next.Close()
}

// fire fires the windows that wm completes and advances the watermark.
func (op *slicingAggregate) fire(wm int64) error {
	prev := op.wm
	op.wm = wm
	if !op.isFired(op.pending, wm) {
		return nil
	}
	var err error
	if op.cumulate {
		err = op.fireCumulate(prev, wm)
	} else {
		err = op.fireHop(prev, wm)
	}
	if err != nil {
		return err
	}
	op.updatePending()
	return op.flush()
}

func (op *slicingAggregate) fireHop(prev, wm int64) error {
	ends := op.fires[:0]
	for _, s := range op.slices {
		last := s.end - op.sliceSize + op.size
		for e := s.end; e <= last; e += op.sliceSize {
			if op.isFired(e, prev) {
				continue
			}
			if !op.isFired(e, wm) {
				break
			}
			ends = append(ends, e)
		}
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	op.fires = ends
	for _, e := range ends {
		if err := op.fireHopWindow(e); err != nil {
			return err
		}
	}
	return nil
}

// fireHopWindow emits the window ending at end and frees the slice whose
// last window it is.
func (op *slicingAggregate) fireHopWindow(end int64) error {
	start := end - op.size
	first := op.slices[start+op.sliceSize]
	if op.nSlices == 1 {
		if first == nil {
			return nil
		}
		for _, e := range op.sortEntries(first.m) {
			if err := op.emit(start, end, e); err != nil {
				return err
			}
		}
		op.freeSlice(first)
		return nil
	}
	// Merge the window's slices, oldest first, into fresh entries: the
	// slices stay intact for the later windows that share them.
	m := op.merged
	for se := start + op.sliceSize; se <= end; se += op.sliceSize {
		s := op.slices[se]
		if s == nil {
			continue
		}
		for k, e := range s.m {
			if d := m[k]; d != nil {
				if err := d.group.Merge(e.group); err != nil {
					return fmt.Errorf("%s: cannot merge slices: %w", op.name, err)
				}
				continue
			}
			d, err := op.copyEntry(e)
			if err != nil {
				return err
			}
			m[k] = d
		}
	}
	for _, e := range op.sortEntries(m) {
		if err := op.emit(start, end, e); err != nil {
			return err
		}
	}
	for _, e := range m {
		op.release(e)
	}
	clear(m)
	if first != nil {
		op.freeSlice(first)
	}
	return nil
}

func (op *slicingAggregate) fireCumulate(prev, wm int64) error {
	fires := op.cfires[:0]
	for _, c := range op.cums {
		for k := c.nextK; k <= op.nSlices; k++ {
			e := c.start + k*op.sliceSize
			if !op.isFired(e, wm) {
				break
			}
			fires = append(fires, cumFire{e, c})
		}
	}
	slices.SortFunc(fires, func(x, y cumFire) int { return cmp.Compare(x.end, y.end) })
	op.cfires = fires
	for _, f := range fires {
		if err := op.fireCumulateWindow(f.c, f.end); err != nil {
			return err
		}
	}
	clear(fires) // drop references to freed max windows
	return nil
}

// fireCumulateWindow merges the slice ending at end into c's running
// accumulators and emits window [c.start, end) for every key seen so far.
func (op *slicingAggregate) fireCumulateWindow(c *cumWindow, end int64) error {
	c.nextK++
	if s := op.slices[end]; s != nil {
		for k, e := range s.m {
			if d := c.running[k]; d != nil {
				if err := d.group.Merge(e.group); err != nil {
					return fmt.Errorf("%s: cannot merge slices: %w", op.name, err)
				}
				if op.track && !d.dirty {
					op.touch(d)
				}
				op.release(e)
				continue
			}
			// The slice is freed below: its entry moves over as is.
			op.rehome(e, home{cumKey, c.start})
			c.running[k] = e
			c.order = append(c.order, e)
			c.dirty = true
		}
		clear(s.m)
		op.freeSlice(s)
	}
	if len(c.order) != len(c.running) {
		// Late rows went straight into running: rebuild the order.
		c.order = c.order[:0]
		for _, e := range c.running {
			c.order = append(c.order, e)
		}
		c.dirty = true
	}
	if c.dirty {
		sortByKey(c.order)
		c.dirty = false
	}
	for _, e := range c.order {
		if err := op.emit(c.start, end, e); err != nil {
			return err
		}
	}
	if end == c.start+op.size {
		for _, e := range c.running {
			op.release(e)
		}
		op.freeMap(c.running)
		c.running, c.order = nil, nil
		delete(op.cums, c.start)
	}
	return nil
}

// markEnd records, as the input ends, the last instant of the last window
// that will fire: the watermark a checkpoint records from then on.
func (op *slicingAggregate) markEnd() {
	last := op.wm
	if op.cumulate {
		for _, c := range op.cums {
			last = max(last, op.zone.Last(c.start+op.size))
		}
	} else {
		for _, s := range op.slices {
			last = max(last, op.zone.Last(s.end-op.sliceSize+op.size))
		}
	}
	op.endMark = last
}

// updatePending recomputes the end of the earliest window that may fire.
func (op *slicingAggregate) updatePending() {
	p := int64(math.MaxInt64)
	if op.cumulate {
		for _, c := range op.cums {
			p = min(p, c.start+c.nextK*op.sliceSize)
		}
	} else {
		for _, s := range op.slices {
			last := s.end - op.sliceSize + op.size
			for e := s.end; e <= last; e += op.sliceSize {
				if !op.isFired(e, op.wm) {
					p = min(p, e)
					break
				}
			}
		}
	}
	op.pending = p
}
