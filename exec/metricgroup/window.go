package metricgroup

import (
	"fmt"
	"math"
	"slices"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// keyState is the state of one key: a winState a frame.
type keyState struct {
	key  string
	vals []types.Value
	// clock is the newest time folded in (math.MinInt64: none).
	clock int64
	wins  []winState
	// dirty: changed since the last checkpoint; fresh: since the last
	// publication.
	dirty, fresh, gone bool
}

// winState is a key's state of one frame.
type winState struct {
	has bool
	// start is the TUMBLE window's start, the SESSION's first row time,
	// the HOP's newest pane (time / slide); end is the SESSION's last.
	start, end int64
	// acc holds the calls' accumulators (all windows but HOP).
	acc agg.Group
	// panes holds HOP's accumulators, a pane p at p mod panes (nil:
	// empty); total is the window's, the panes merged: rows are added to
	// it too, and it is merged again when a pane leaves (stale).
	panes []agg.Group
	total agg.Group
	stale bool
	// rows are a LAST frame's rows, in time order; seq numbers them as
	// they come; from[c] is the first row call c was fed (a metric added
	// to a group later starts from nothing).
	rows []frameRow
	head int // rows[:head] have left the frame
	seq  int64
	from []int64
	// deques keep a LAST frame's MIN and MAX (frame.ext), by call.
	deques []deque
}

type frameRow struct {
	t, seq int64
	args   []types.Value
}

func (o *Operator) newKey(key string) *keyState {
	k := &keyState{key: key, clock: math.MinInt64, wins: make([]winState, len(o.frames))}
	for fi := range o.frames {
		o.initWin(&o.frames[fi], &k.wins[fi])
	}
	o.keys[key] = k
	return k
}

func (o *Operator) initWin(f *frame, w *winState) {
	if f.win.Kind == "HOP" {
		w.panes = make([]agg.Group, f.panes)
	} else {
		w.acc = agg.NewGroup(f.sub)
	}
	if f.win.Kind == "LAST" {
		w.from = make([]int64, len(f.calls))
		if f.extremes {
			w.deques = make([]deque, len(f.calls))
		}
	}
}

// rows is how many LAST frame rows k holds.
func (k *keyState) rows() int64 {
	n := 0
	for i := range k.wins {
		n += len(k.wins[i].rows) - k.wins[i].head
	}
	return int64(n)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// fold folds a row of time t into key k's frames, then writes the
// metrics' values into o.vals.
func (o *Operator) fold(k *keyState, t int64, vals []types.Value) error {
	o.touch(k)
	k.clock = max(k.clock, t)
	late := false
	for fi := range o.frames {
		f := &o.frames[fi]
		w := &k.wins[fi]
		var err error
		switch f.win.Kind {
		case "":
			err = w.acc.Add(f.sub, vals, o.scratch)
		case "TUMBLE":
			ws := floorDiv(t, f.win.Size) * f.win.Size
			switch {
			case !w.has || ws > w.start:
				resetGroup(w.acc)
				w.has, w.start = true, ws
			case ws < w.start:
				late = true
				continue
			}
			err = w.acc.Add(f.sub, vals, o.scratch)
		case "SESSION":
			gap := f.win.Size
			switch {
			case !w.has || t >= w.end+gap:
				resetGroup(w.acc)
				w.has, w.start, w.end = true, t, t
			case t <= w.start-gap:
				late = true
				continue
			default:
				w.start, w.end = min(w.start, t), max(w.end, t)
			}
			err = w.acc.Add(f.sub, vals, o.scratch)
		case "HOP":
			p := floorDiv(t, f.win.Slide)
			n := int64(f.panes)
			if !w.has {
				w.has, w.start = true, p
			}
			if p > w.start {
				// Panes that fall out of the newest window are emptied.
				for q := max(w.start+1, p-n+1); q <= p; q++ {
					w.panes[mod(q, n)] = resetOrNil(w.panes[mod(q, n)])
				}
				w.start, w.stale = p, true
			}
			if p <= w.start-n {
				late = true
				continue
			}
			g := w.panes[mod(p, n)]
			if g == nil {
				g = agg.NewGroup(f.sub)
				w.panes[mod(p, n)] = g
			}
			err = g.Add(f.sub, vals, o.scratch)
			if err == nil && !w.stale && w.total != nil {
				err = w.total.Add(f.sub, vals, o.scratch)
			}
		case "LAST":
			low := k.clock - f.win.Size
			if t < low {
				late = true
				continue
			}
			err = o.addRow(f, w, t, vals)
			if err == nil {
				err = o.evict(f, w, low)
			}
		}
		if err != nil {
			return fmt.Errorf("cannot fold a row in: %w", err)
		}
	}
	if late && o.metrics != nil {
		o.metrics.LateRows.Add(1)
	}
	return o.results(k)
}

func mod(a, n int64) int64 { return ((a % n) + n) % n }

func resetGroup(g agg.Group) {
	for _, a := range g {
		a.Reset()
	}
}

func resetOrNil(g agg.Group) agg.Group {
	if g != nil {
		resetGroup(g)
	}
	return g
}

// addRow adds a row to a LAST frame: what its calls read of it is kept,
// in time order, to be retracted when it leaves the frame.
func (o *Operator) addRow(f *frame, w *winState, t int64, vals []types.Value) error {
	// A row whose every call's FILTER rejects it is not kept.
	takes := false
	for _, c := range f.calls {
		fc := o.cfg.Calls[c].Filter
		if fc < 0 {
			takes = true
			break
		}
		if v := vals[fc]; !v.IsNull() && v.Bool() {
			takes = true
			break
		}
	}
	if !takes {
		return nil
	}
	args := make([]types.Value, f.nargs)
	for ci, c := range f.calls {
		call := &o.cfg.Calls[c]
		j := f.at[ci]
		for _, a := range call.Args {
			args[j] = vals[a]
			j++
		}
		if call.Filter >= 0 {
			args[j] = vals[call.Filter]
		}
	}
	r := frameRow{t: t, seq: w.seq, args: args}
	w.seq++
	// Rows come in time order but for the out of order ones.
	i := len(w.rows)
	for i > w.head && w.rows[i-1].t > t {
		i--
	}
	inOrder := i == len(w.rows)
	o.rows++
	if inOrder {
		w.rows = append(w.rows, r)
	} else {
		w.rows = slices.Insert(w.rows, i, r)
	}
	for ci := range f.sub {
		if f.extremes && f.ext[ci] != 0 {
			if inOrder {
				o.pushRow(f, w, ci, &w.rows[len(w.rows)-1])
			}
			continue
		}
		if err := apply(w.acc[ci], &f.sub[ci], args, o.scratch, false); err != nil {
			return err
		}
	}
	if !inOrder && f.extremes {
		o.rebuild(f, w)
	}
	return nil
}

// evict retracts the rows of a LAST frame older than low.
func (o *Operator) evict(f *frame, w *winState, low int64) error {
	n := w.head
	for n < len(w.rows) && w.rows[n].t < low {
		r := &w.rows[n]
		for ci := range f.calls {
			if r.seq < w.from[ci] {
				continue // never fed to this call
			}
			if f.extremes && f.ext[ci] != 0 {
				w.deques[ci].drop(r.seq)
				continue
			}
			if err := apply(w.acc[ci], &f.sub[ci], r.args, o.scratch, true); err != nil {
				return err
			}
		}
		n++
	}
	if n > w.head {
		o.rows -= int64(n - w.head)
		clear(w.rows[w.head:n])
		w.head = n
		// The left rows move down once they are half the slice: each row
		// moves at most once on average.
		if w.head >= 32 && w.head*2 >= len(w.rows) {
			k := copy(w.rows, w.rows[w.head:])
			clear(w.rows[k:])
			w.rows, w.head = w.rows[:k], 0
			if cap(w.rows) > 64 && k < cap(w.rows)/4 {
				w.rows = slices.Clone(w.rows)
			}
		}
	}
	return nil
}

// apply folds a row into (or out of) one accumulator of call c.
func apply(a agg.Accumulator, c *agg.Call, row, scratch []types.Value, retract bool) error {
	if c.Filter >= 0 {
		if v := row[c.Filter]; v.IsNull() || !v.Bool() {
			return nil
		}
	}
	args := scratch[:len(c.Args)]
	for j, col := range c.Args {
		args[j] = row[col]
	}
	if retract {
		return a.Retract(args)
	}
	return a.Add(args)
}

// results writes the current value of each metric of k into o.vals.
func (o *Operator) results(k *keyState) error {
	for m, r := range o.result {
		f := &o.frames[r.frame]
		w := &k.wins[r.frame]
		a := w.acc
		if f.win.Kind == "HOP" {
			if err := o.hopTotal(f, w); err != nil {
				return err
			}
			a = w.total
		}
		if f.extremes && f.ext[r.call] != 0 {
			o.vals[m] = w.deques[r.call].front()
			continue
		}
		if fr, ok := a[r.call].(agg.FallibleResult); ok {
			v, err := fr.ResultErr()
			if err != nil {
				return err
			}
			o.vals[m] = v
			continue
		}
		o.vals[m] = a[r.call].Result()
	}
	return nil
}

// hopTotal makes a HOP window's total current: when a pane left it, the
// panes it holds are merged again (once a slide, not once a row).
func (o *Operator) hopTotal(f *frame, w *winState) error {
	if w.total == nil {
		w.total, w.stale = agg.NewGroup(f.sub), true
	}
	if !w.stale {
		return nil
	}
	resetGroup(w.total)
	for _, g := range w.panes {
		if g != nil {
			if err := w.total.Merge(g); err != nil {
				return err
			}
		}
	}
	w.stale = false
	return nil
}
