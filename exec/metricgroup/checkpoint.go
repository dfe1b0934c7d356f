package metricgroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// Store layout: "k" + key, one record a key:
//
//	uvarint n, then the n KEY BY values (agg.AppendStateValue)
//	varint clock
//	uvarint frames, each:
//	  string window (Window.String), uvarint has, varint start, end, seq
//	  uvarint calls, each: string identity (Metric.Computes without the
//	    window), varint from, then the accumulator's state (bytes) or,
//	    for HOP, uvarint panes and per pane from the newest back: uvarint
//	    0 (empty) or 1 and its state (bytes)
//	  uvarint rows (LAST), each: varint time, varint seq, then per call
//	    uvarint n and its n argument values
//
// string and bytes are a uvarint length and the bytes. Windows and calls
// are matched by identity on restore, so that a new version of the group
// keeps the state of the metrics it did not change; a metric that is new
// starts empty, one that is gone is let go.

// CheckpointBarrier implements exec.BarrierCheckpointer: the changed keys
// go to the store, and their values wait for the checkpoint to complete
// before they are published.
func (o *Operator) CheckpointBarrier(id int64) error {
	if o.store != nil {
		var kbuf, vbuf []byte
		for _, k := range o.dirty {
			k.dirty = false
			kbuf = append(append(kbuf[:0], 'k'), k.key...)
			if k.gone {
				if err := o.store.Delete(kbuf); err != nil {
					return err
				}
				continue
			}
			var err error
			if vbuf, err = o.appendKey(vbuf[:0], k); err != nil {
				return fmt.Errorf("metric group %s: cannot encode a key's state: %w", o.cfg.Group, err)
			}
			if err := o.store.Put(kbuf, vbuf); err != nil {
				return err
			}
		}
		if err := o.store.Checkpoint(); err != nil {
			return err
		}
	} else {
		for _, k := range o.dirty {
			k.dirty = false
		}
	}
	o.dirty = o.dirty[:0]
	o.gauge.Set(int64(len(o.keys)), o.stateBytes())
	if o.checkpt && len(o.fresh) > 0 {
		o.pending = append(o.pending, pendingPub{id: id, changes: o.changes(o.fresh)})
		o.fresh = o.fresh[:0]
	}
	return nil
}

// Checkpoint implements exec.Checkpointer (a snapshot outside a
// barrier's checkpoint: the end of a job).
func (o *Operator) Checkpoint() error { return o.CheckpointBarrier(-1) }

// CheckpointComplete implements exec.CheckpointListener: the values the
// checkpoint holds are published.
func (o *Operator) CheckpointComplete(id int64) error {
	n := 0
	for n < len(o.pending) && (id < 0 || o.pending[n].id <= id) {
		n++
	}
	var all []Change
	for _, p := range o.pending[:n] {
		all = append(all, p.changes...)
	}
	o.pending = o.pending[n:]
	return o.publish(all)
}

// Release implements exec.Releaser: at the end of a job, whatever waits
// is published.
func (o *Operator) Release() error { return o.CheckpointComplete(-1) }

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendState appends an accumulator's state as bytes.
func appendState(dst []byte, a agg.Accumulator) []byte {
	n := len(dst)
	dst = a.AppendState(dst)
	st := append([]byte(nil), dst[n:]...)
	return appendBytes(dst[:n], st)
}

func (o *Operator) appendKey(dst []byte, k *keyState) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(k.vals)))
	for _, v := range k.vals {
		dst = agg.AppendStateValue(dst, v)
	}
	dst = binary.AppendVarint(dst, k.clock)
	dst = binary.AppendUvarint(dst, uint64(len(o.frames)))
	for fi := range o.frames {
		f := &o.frames[fi]
		w := &k.wins[fi]
		dst = appendBytes(dst, []byte(f.win.String()))
		has := uint64(0)
		if w.has {
			has = 1
		}
		dst = binary.AppendUvarint(dst, has)
		dst = binary.AppendVarint(dst, w.start)
		dst = binary.AppendVarint(dst, w.end)
		dst = binary.AppendVarint(dst, w.seq)
		dst = binary.AppendUvarint(dst, uint64(len(f.calls)))
		for ci := range f.calls {
			dst = appendBytes(dst, []byte(f.fps[ci]))
			from := int64(0)
			if w.from != nil {
				from = w.from[ci]
			}
			dst = binary.AppendVarint(dst, from)
			if f.win.Kind != "HOP" {
				dst = appendState(dst, w.acc[ci])
				continue
			}
			n := int64(f.panes)
			dst = binary.AppendUvarint(dst, uint64(n))
			for i := int64(0); i < n; i++ {
				g := w.panes[mod(w.start-i, n)]
				if g == nil {
					dst = binary.AppendUvarint(dst, 0)
					continue
				}
				dst = binary.AppendUvarint(dst, 1)
				dst = appendState(dst, g[ci])
			}
		}
		dst = binary.AppendUvarint(dst, uint64(len(w.rows)-w.head))
		for _, r := range w.rows[w.head:] {
			dst = binary.AppendVarint(dst, r.t)
			dst = binary.AppendVarint(dst, r.seq)
			for ci, c := range f.calls {
				n := o.rowArgs(c)
				dst = binary.AppendUvarint(dst, uint64(n))
				for _, v := range r.args[f.at[ci] : f.at[ci]+n] {
					dst = agg.AppendStateValue(dst, v)
				}
			}
		}
	}
	return dst, nil
}

// rowArgs is how many values of a LAST frame's row call c reads.
func (o *Operator) rowArgs(c int) int {
	call := &o.cfg.Calls[c]
	n := len(call.Args)
	if call.Filter >= 0 {
		n++
	}
	return n
}

func (o *Operator) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		if len(k) == 0 || k[0] != 'k' {
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		if err := o.loadKey(string(k[1:]), v); err != nil {
			ferr = fmt.Errorf("key %q: %w", k[1:], err)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}

var errCorrupt = errors.New("corrupt record")

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errCorrupt
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) value() types.Value {
	if r.err != nil {
		return types.Value{}
	}
	v, rest, err := agg.DecodeStateValue(r.b)
	if err != nil {
		r.err = err
		return types.Value{}
	}
	r.b = rest
	return v
}

// count reads a count of things each at least one byte long.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errCorrupt
		return 0
	}
	return int(n)
}

func (o *Operator) loadKey(key string, v []byte) error {
	r := &reader{b: v}
	k := o.newKey(key)
	k.vals = make([]types.Value, r.count())
	for i := range k.vals {
		k.vals[i] = r.value()
	}
	k.clock = r.varint()
	frames := r.count()
	for range frames {
		win := string(r.bytes())
		fi := -1
		for i := range o.frames {
			if o.frames[i].win.String() == win {
				fi = i
			}
		}
		var f *frame
		var w *winState
		if fi >= 0 {
			f, w = &o.frames[fi], &k.wins[fi]
		}
		has := r.uvarint() == 1
		start, end, seq := r.varint(), r.varint(), r.varint()
		if w != nil {
			w.has, w.start, w.end, w.seq = has, start, end, seq
			for ci := range w.from {
				w.from[ci] = seq // until the call is found below
			}
		}
		calls := r.count()
		// where[i] is the current call of the stored call i, or -1.
		where := make([]int, calls)
		hop := len(win) >= 3 && win[:3] == "HOP"
		for i := range calls {
			fp := string(r.bytes())
			from := r.varint()
			where[i] = -1
			if f != nil {
				for ci := range f.calls {
					if f.fps[ci] == fp {
						where[i] = ci
					}
				}
			}
			ci := where[i]
			if ci >= 0 && w.from != nil {
				w.from[ci] = from
			}
			if !hop {
				st := r.bytes()
				if ci >= 0 && r.err == nil {
					if err := w.acc[ci].LoadState(st); err != nil {
						return err
					}
				}
				continue
			}
			panes := r.count()
			for p := int64(0); p < int64(panes); p++ {
				if r.uvarint() == 0 {
					continue
				}
				st := r.bytes()
				if ci < 0 || r.err != nil || int(p) >= f.panes {
					continue
				}
				slot := mod(start-p, int64(f.panes))
				g := w.panes[slot]
				if g == nil {
					g = agg.NewGroup(f.sub)
					w.panes[slot] = g
				}
				if err := g[ci].LoadState(st); err != nil {
					return err
				}
			}
		}
		rows := r.count()
		for range rows {
			fr := frameRow{t: r.varint(), seq: r.varint()}
			if f != nil {
				fr.args = make([]types.Value, f.nargs)
			}
			for i := range calls {
				n := r.count()
				for j := range n {
					val := r.value()
					if ci := where[i]; ci >= 0 && j < o.rowArgs(f.calls[ci]) {
						fr.args[f.at[ci]+j] = val
					}
				}
			}
			if w != nil {
				w.rows = append(w.rows, fr)
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	for fi := range o.frames {
		if f := &o.frames[fi]; f.extremes {
			o.rebuild(f, &k.wins[fi])
		}
	}
	o.rows += k.rows()
	if k.clock == math.MinInt64 {
		return errCorrupt
	}
	return nil
}
