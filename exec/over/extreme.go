package over

import "github.com/sluicesql/sluice/types"

// MIN and MAX over a bounded frame do without accumulators: rows leave a
// frame oldest first, so the extreme of the frame is the front of a
// monotonic deque of the frame's rows (each later than the one before
// and, for MAX, smaller), which costs O(1) amortized per row and keeps a
// few values rather than all of the frame's. A deque follows from the
// frame's rows, so checkpoints do not store it.

// extremeCall is a MIN or MAX call kept in deques.
type extremeCall struct {
	result int // index of the call's result
	col    int // column of the frame row
	filter int // column of the FILTER condition in the frame row, or -1
	max    bool
}

// deque holds frame rows' values with their sequence numbers (see
// partition.first).
type deque struct {
	items []dequeItem
	head  int
}

type dequeItem struct {
	seq int64
	v   types.Value
}

// isExtreme reports whether a call can be kept in a deque.
func isExtreme(name string, distinct bool, args int) (max, ok bool) {
	if distinct || args != 1 {
		return false, false
	}
	switch name {
	case "MAX":
		return true, true
	case "MIN":
		return false, true
	}
	return false, false
}

// addExtremes adds the newest frame row, seq, to the deques.
func (o *Operator) addExtremes(p *partition, seq int64, row []types.Value) {
	for i := range o.extremes {
		e := &o.extremes[i]
		v := row[e.col]
		if v.IsNull() {
			continue
		}
		if e.filter >= 0 {
			if f := row[e.filter]; f.IsNull() || !f.Bool() {
				continue
			}
		}
		d := &p.deques[i]
		for len(d.items) > d.head {
			c := types.Compare(d.items[len(d.items)-1].v, v)
			if e.max && c > 0 || !e.max && c < 0 {
				break
			}
			d.items[len(d.items)-1] = dequeItem{}
			d.items = d.items[:len(d.items)-1]
		}
		d.items = append(d.items, dequeItem{seq: seq, v: v})
	}
}

// retractExtremes drops the oldest frame row, seq, from the deques.
func (o *Operator) retractExtremes(p *partition, seq int64) {
	for i := range p.deques {
		d := &p.deques[i]
		if len(d.items) == d.head || d.items[d.head].seq != seq {
			continue
		}
		d.items[d.head] = dequeItem{}
		d.head++
		switch {
		case d.head == len(d.items):
			d.items, d.head = d.items[:0], 0
		case d.head >= 32 && d.head*2 >= len(d.items):
			n := copy(d.items, d.items[d.head:])
			clear(d.items[n:])
			d.items, d.head = d.items[:n], 0
		}
	}
}

// extremeResults writes the deques' results into o.results.
func (o *Operator) extremeResults(p *partition) {
	for i := range o.extremes {
		e := &o.extremes[i]
		d := &p.deques[i]
		if len(d.items) == d.head {
			o.results[e.result] = types.Value{}
			continue
		}
		o.results[e.result] = d.items[d.head].v
	}
}
