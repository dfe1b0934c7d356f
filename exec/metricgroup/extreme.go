package metricgroup

import "github.com/sluicesql/sluice/types"

// MIN and MAX over a LAST frame keep no accumulator: rows leave the frame
// in time order, so the frame's extreme is the front of a monotonic
// deque of its rows (O(1) amortized a row; an accumulator that can
// retract keeps every value sorted, and moves them at each insert). A row
// that comes out of order, into the middle of the frame, has the deque
// built again from the frame's rows. The deques follow from the rows, so
// checkpoints do not keep them.

type deque struct {
	items []dequeItem
	head  int
}

type dequeItem struct {
	seq int64
	v   types.Value
}

// extremeOf says whether call c of a LAST frame is kept in a deque: +1 for
// MAX, -1 for MIN, 0 for neither.
func extremeOf(name string, args int) int8 {
	if args != 1 {
		return 0
	}
	switch name {
	case "MAX":
		return 1
	case "MIN":
		return -1
	}
	return 0
}

// push adds a frame row's value (args is the row's values of the call,
// then its filter, if it has one).
func (d *deque) push(max bool, seq int64, v types.Value, filtered bool, filter types.Value) {
	if v.IsNull() || filtered && (filter.IsNull() || !filter.Bool()) {
		return
	}
	for len(d.items) > d.head {
		c := types.Compare(d.items[len(d.items)-1].v, v)
		if max && c > 0 || !max && c < 0 {
			break
		}
		d.items[len(d.items)-1] = dequeItem{}
		d.items = d.items[:len(d.items)-1]
	}
	d.items = append(d.items, dequeItem{seq: seq, v: v})
}

// drop removes the frame row seq, which leaves the frame, if it is the
// front.
func (d *deque) drop(seq int64) {
	if len(d.items) == d.head || d.items[d.head].seq != seq {
		return
	}
	d.items[d.head] = dequeItem{}
	d.head++
	if d.head >= 32 && d.head*2 >= len(d.items) {
		k := copy(d.items, d.items[d.head:])
		clear(d.items[k:])
		d.items, d.head = d.items[:k], 0
	}
}

func (d *deque) front() types.Value {
	if len(d.items) == d.head {
		return types.Value{}
	}
	return d.items[d.head].v
}

func (d *deque) reset() {
	clear(d.items)
	d.items, d.head = d.items[:0], 0
}

// pushRow adds frame row r to the deque of extreme call ci of f.
func (o *Operator) pushRow(f *frame, w *winState, ci int, r *frameRow) {
	if r.seq < w.from[ci] {
		return
	}
	call := &f.sub[ci]
	var filter types.Value
	if call.Filter >= 0 {
		filter = r.args[call.Filter]
	}
	w.deques[ci].push(f.ext[ci] > 0, r.seq, r.args[call.Args[0]], call.Filter >= 0, filter)
}

// rebuild builds the deques of f's extreme calls again from the frame's
// rows.
func (o *Operator) rebuild(f *frame, w *winState) {
	for ci, e := range f.ext {
		if e == 0 {
			continue
		}
		w.deques[ci].reset()
		for i := w.head; i < len(w.rows); i++ {
			o.pushRow(f, w, ci, &w.rows[i])
		}
	}
}
