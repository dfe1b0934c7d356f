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
	// empty).
	panes []agg.Group
	// rows are a LAST frame's rows, in time order; seq numbers them as
	// they come; from[c] is the first row call c was fed (a metric added
	// to a group later starts from nothing).
	rows []frameRow
	seq  int64
	from []int64
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
	}
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
				w.start = p
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
	for i > 0 && w.rows[i-1].t > t {
		i--
	}
	w.rows = slices.Insert(w.rows, i, r)
	return w.acc.Add(f.sub, args, o.scratch)
}

// evict retracts the rows of a LAST frame older than low.
func (o *Operator) evict(f *frame, w *winState, low int64) error {
	n := 0
	for n < len(w.rows) && w.rows[n].t < low {
		r := &w.rows[n]
		for ci := range f.calls {
			if r.seq < w.from[ci] {
				continue // never fed to this call
			}
			if err := apply(w.acc[ci], &f.sub[ci], r.args, o.scratch, true); err != nil {
				return err
			}
		}
		n++
	}
	if n > 0 {
		clear(w.rows[:n])
		w.rows = w.rows[n:]
		if cap(w.rows) > 64 && len(w.rows) < cap(w.rows)/4 {
			w.rows = slices.Clone(w.rows)
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
		var a agg.Accumulator
		if f.win.Kind == "HOP" {
			var err error
			if a, err = o.hopResult(f, w, r.call); err != nil {
				return err
			}
		} else {
			a = w.acc[r.call]
		}
		if fr, ok := a.(agg.FallibleResult); ok {
			v, err := fr.ResultErr()
			if err != nil {
				return err
			}
			o.vals[m] = v
			continue
		}
		o.vals[m] = a.Result()
	}
	return nil
}

// hopResult merges call ci's panes of the newest window into one
// accumulator.
func (o *Operator) hopResult(f *frame, w *winState, ci int) (agg.Accumulator, error) {
	var acc agg.Accumulator
	for _, g := range w.panes {
		if g == nil {
			continue
		}
		if acc == nil {
			acc = g[ci].Clone()
			continue
		}
		if err := acc.Merge(g[ci]); err != nil {
			return nil, err
		}
	}
	if acc == nil {
		acc = agg.NewGroup(f.sub[ci : ci+1])[0]
	}
	return acc, nil
}
