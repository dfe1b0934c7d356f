package join

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// IntervalConfig configures an interval join: a join of two append-only
// inputs on keys and on event times, a left row l and a right row r
// matching when Lower <= l.time - r.time <= Upper. Rows are kept only as
// long as a row of the other side can still match them; the watermark
// drops them.
type IntervalConfig struct {
	Config
	// LeftTime and RightTime are the event-time columns of each side.
	LeftTime, RightTime int
	// Lower and Upper bound l.time - r.time, in microseconds.
	Lower, Upper int64
}

// Interval is a running interval join.
//
// Invariants:
//   - A row of the left side at time t can match right rows up to time
//     t - Lower; once the watermark passes that, no right row that is not
//     late can match it, and it is dropped (an outer side's row that never
//     matched is emitted then, padded with NULLs). A right row at t is
//     kept until the watermark passes t + Upper.
//   - Output is append-only: +I rows, joined or padded.
//   - The watermark sent on is held back by the larger bound, so that the
//     time columns of the rows emitted later are never behind it.
//   - A row that arrives after its own expiry is matched with what is kept
//     but not kept itself.
type Interval struct {
	pairs
	bounds IntervalConfig
	sides  [2]iside
	wm     int64
	delay  int64
}

type iside struct {
	keys    []int
	time    int
	width   int
	outer   bool
	codec   *rowcodec.Codec
	buckets map[string][]*irow
	expiry  expiryHeap
	dirty   map[string]bool
}

// irow is a kept row.
type irow struct {
	vals    []types.Value
	ts      int64
	expires int64
	key     string
	matched bool
}

type expiryHeap []*irow

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires < h[j].expires }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(*irow)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// NewInterval returns an interval join operator.
func NewInterval(cfg IntervalConfig) (*Interval, error) {
	if len(cfg.LeftKeys) == 0 || len(cfg.LeftKeys) != len(cfg.RightKeys) {
		return nil, errors.New("interval join: keys of both sides, as many on each")
	}
	if cfg.NullSafe || cfg.NullAware {
		return nil, errors.New("interval join: keys are compared with SQL equality only")
	}
	if cfg.Lower > cfg.Upper {
		return nil, fmt.Errorf("interval join: lower bound %d above upper bound %d", cfg.Lower, cfg.Upper)
	}
	o := &Interval{pairs: newPairs(cfg.Config), bounds: cfg, wm: exec.MinWatermark, delay: max(cfg.Upper, -cfg.Lower, 0)}
	for i, typs := range [][]types.Type{cfg.Left, cfg.Right} {
		c, err := rowcodec.New(typs)
		if err != nil {
			return nil, fmt.Errorf("interval join: %w", err)
		}
		s := iside{width: len(typs), codec: c, buckets: map[string][]*irow{}, dirty: map[string]bool{}}
		if i == 0 {
			s.keys, s.time, s.outer = cfg.LeftKeys, cfg.LeftTime, cfg.Kind == Left || cfg.Kind == Full
		} else {
			s.keys, s.time, s.outer = cfg.RightKeys, cfg.RightTime, cfg.Kind == Right || cfg.Kind == Full
		}
		o.sides[i] = s
	}
	return o, nil
}

// Open implements exec.Operator: it restores the last checkpoint's rows.
func (o *Interval) Open(ctx *exec.Context) error {
	return o.open(ctx, "interval join", o.restore)
}

// ProcessInput implements exec.MultiInput: input 0 is the left side.
func (o *Interval) ProcessInput(input int, b *types.Batch) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("interval join: no input %d", input)
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.admit(r) {
			continue
		}
		if r.Kind != types.Insert && r.Kind != types.UpdateAfter {
			return fmt.Errorf("interval join: input %d sent a retraction (%s); interval joins take append-only inputs", input, r.Kind)
		}
		if err := o.row(input, r.Vals); err != nil {
			return err
		}
		if err := o.flushIfFull(); err != nil {
			return err
		}
	}
	return o.flush()
}

// window returns the times of the other side's rows that a row of side
// input at time t matches.
func (o *Interval) window(input int, t int64) (lo, hi int64) {
	if input == 0 { // r.time in [t - Upper, t - Lower]
		return t - o.bounds.Upper, t - o.bounds.Lower
	}
	return t + o.bounds.Lower, t + o.bounds.Upper // l.time
}

func (o *Interval) row(input int, vals []types.Value) error {
	me, other := &o.sides[input], &o.sides[1-input]
	tv := vals[me.time]
	key, null := o.key(me.keys, vals)
	if null || tv.IsNull() {
		if me.outer {
			o.emitPadded(input, vals, types.Insert, 1)
		}
		return nil
	}
	t := tv.Int()
	lo, hi := o.window(input, t)
	matched := false
	for _, e := range other.buckets[key] {
		if e.ts < lo || e.ts > hi {
			continue
		}
		ok, err := o.residual(input, vals, e.vals)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		matched = true
		if !e.matched {
			e.matched = true
			other.dirty[key] = true
		}
		o.emitJoined(input, vals, e.vals, types.Insert, 1)
	}
	// Keep the row while a row of the other side can still match it: one
	// at the watermark or later, up to hi.
	if hi < o.wm {
		if me.outer && !matched {
			o.emitPadded(input, vals, types.Insert, 1)
		}
		return nil
	}
	e := &irow{vals: append([]types.Value(nil), vals...), ts: t, expires: hi, key: key, matched: matched}
	me.buckets[key] = append(me.buckets[key], e)
	heap.Push(&me.expiry, e)
	me.dirty[key] = true
	return nil
}

// Watermark implements exec.Operator: rows that can no longer match are
// dropped (outer ones that never matched emitted, padded), then the
// watermark goes on, held back by the larger bound.
func (o *Interval) Watermark(wm int64) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	for si := range o.sides {
		s := &o.sides[si]
		for len(s.expiry) > 0 && s.expiry[0].expires < wm {
			e := heap.Pop(&s.expiry).(*irow)
			if s.outer && !e.matched {
				o.emitPadded(si, e.vals, types.Insert, 1)
			}
			rows := s.buckets[e.key]
			for i, x := range rows {
				if x == e {
					rows = append(rows[:i], rows[i+1:]...)
					break
				}
			}
			if len(rows) == 0 {
				delete(s.buckets, e.key)
			} else {
				s.buckets[e.key] = rows
			}
			s.dirty[e.key] = true
		}
	}
	if err := o.flush(); err != nil {
		return err
	}
	if wm == exec.MaxWatermark {
		return o.cfg.Next.Watermark(wm)
	}
	return o.cfg.Next.Watermark(wm - o.delay)
}

// Close implements exec.Operator.
func (o *Interval) Close() error {
	o.sides[0].buckets, o.sides[1].buckets = nil, nil
	return o.cfg.Next.Close()
}

// Store layout: one record per side and key, key = side byte + join key;
// value = uvarint rows, one flag byte per row (matched), then the rows
// (rowcodec). The expiry of a row follows from its time.

// Checkpoint implements exec.Checkpointer.
func (o *Interval) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	var kbuf, vbuf []byte
	for si := range o.sides {
		s := &o.sides[si]
		for key := range s.dirty {
			kbuf = append(append(kbuf[:0], byte(si)), key...)
			rows := s.buckets[key]
			if len(rows) == 0 {
				if err := o.store.Delete(kbuf); err != nil {
					return err
				}
				continue
			}
			vbuf = binary.AppendUvarint(vbuf[:0], uint64(len(rows)))
			enc := s.codec.NewEncoder()
			for _, e := range rows {
				flag := byte(0)
				if e.matched {
					flag = 1
				}
				vbuf = append(vbuf, flag)
				if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: e.vals}); err != nil {
					return err
				}
			}
			vbuf = append(vbuf, enc.Bytes()...)
			if err := o.store.Put(kbuf, vbuf); err != nil {
				return err
			}
		}
		clear(s.dirty)
	}
	return o.store.Checkpoint()
}

func (o *Interval) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		if len(k) < 1 || k[0] > 1 {
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		si := int(k[0])
		s := &o.sides[si]
		n, m := binary.Uvarint(v)
		if m <= 0 || uint64(len(v)-m) < n {
			ferr = errors.New("corrupt record")
			return false
		}
		flags := v[m : m+int(n)]
		batch := types.NewBatch(int(n), s.width)
		got, err := s.codec.Decode(batch, v[m+int(n):])
		if err != nil || got != int(n) {
			ferr = fmt.Errorf("corrupt rows: %v", err)
			return false
		}
		key := string(k[1:])
		for i, r := range batch.Rows {
			t := r.Vals[s.time].Int()
			_, hi := o.window(si, t)
			e := &irow{vals: r.Vals, ts: t, expires: hi, key: key, matched: flags[i] == 1}
			s.buckets[key] = append(s.buckets[key], e)
			heap.Push(&s.expiry, e)
		}
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
