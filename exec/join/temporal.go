package join

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// TemporalConfig configures an event-time temporal join: each row of the
// left (probe) side is joined with the version of the right (versioned)
// table that was valid at the left row's time, as Flink's `JOIN v FOR
// SYSTEM_TIME AS OF l.rowtime`. The right keys are the versioned table's
// primary key.
type TemporalConfig struct {
	Config
	// LeftTime is the left side's event-time column; RightTime the
	// versioned table's.
	LeftTime, RightTime int
}

// Temporal is a running event-time temporal join.
//
// Invariants:
//   - The right side is a changelog of versions. A +I or +U row of a key
//     at time t is the key's version from t on; a -D row at time t ends
//     the key's row from t on; -U rows are ignored (the +U that follows
//     carries the new version). Of versions with the same time, the last
//     to arrive counts.
//   - A left row at time t waits until the watermark reaches t, then is
//     joined with the key's latest version at or before t (if that
//     version is a row, and the residual condition holds); a LEFT join
//     pads it otherwise. Waiting rows go out in time order, then the
//     watermark goes on unchanged. A left row at or behind the watermark
//     when it arrives is joined at once.
//   - Once the watermark passes, a key keeps only its latest version at
//     or before the watermark (dropped too if it is a deletion) and the
//     versions after it. A left row that arrives late may therefore find
//     its version gone, as in Flink.
//   - Output is append-only. The left side must be append-only.
//   - A left row with a NULL key or time never matches; a right row with
//     a NULL key or time is no version.
type Temporal struct {
	pairs
	tc TemporalConfig
	wm int64

	lcodec, rcodec *rowcodec.Codec

	waiting waitHeap // left rows waiting for the watermark
	seq     uint64
	added   []*lwait // waiting rows not yet in the store
	gone    []uint64 // seqs of stored waiting rows since emitted

	versions map[string]*vlist
	prune    []*vlist // keys that may have versions to drop
	dirty    []*vlist // keys changed since the last checkpoint
}

// vlist is the versions of one key, in time order.
type vlist struct {
	key    string
	vs     []version
	pruned bool // in Temporal.prune
	dirty  bool // in Temporal.dirty
}

// needsPrune reports whether the watermark may drop versions of l.
func (l *vlist) needsPrune() bool { return len(l.vs) > 1 || len(l.vs) == 1 && l.vs[0].deleted }

type version struct {
	vals    []types.Value
	ts      int64
	deleted bool
}

type lwait struct {
	vals   []types.Value
	ts     int64
	seq    uint64
	key    string
	stored bool
	done   bool
}

type waitHeap []*lwait

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	return h[i].ts < h[j].ts || h[i].ts == h[j].ts && h[i].seq < h[j].seq
}
func (h waitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *waitHeap) Push(x any)   { *h = append(*h, x.(*lwait)) }
func (h *waitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// NewTemporal returns an event-time temporal join operator.
func NewTemporal(cfg TemporalConfig) (*Temporal, error) {
	if len(cfg.LeftKeys) == 0 || len(cfg.LeftKeys) != len(cfg.RightKeys) {
		return nil, errors.New("temporal join: keys of both sides, as many on each")
	}
	if cfg.NullSafe || cfg.NullAware {
		return nil, errors.New("temporal join: keys are compared with SQL equality only")
	}
	if cfg.Kind != Inner && cfg.Kind != Left {
		return nil, errors.New("temporal join: only INNER and LEFT joins")
	}
	if cfg.LeftTime < 0 || cfg.LeftTime >= len(cfg.Left) || cfg.RightTime < 0 || cfg.RightTime >= len(cfg.Right) {
		return nil, errors.New("temporal join: time column out of range")
	}
	o := &Temporal{pairs: newPairs(cfg.Config), tc: cfg, wm: exec.MinWatermark, versions: map[string]*vlist{}}
	var err error
	if o.lcodec, err = rowcodec.New(cfg.Left); err != nil {
		return nil, fmt.Errorf("temporal join: %w", err)
	}
	if o.rcodec, err = rowcodec.New(cfg.Right); err != nil {
		return nil, fmt.Errorf("temporal join: %w", err)
	}
	return o, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Temporal) Open(ctx *exec.Context) error {
	return o.open(ctx, "temporal join", o.restore)
}

// ProcessInput implements exec.MultiInput: input 0 is the left (probe)
// side, input 1 the versioned table.
func (o *Temporal) ProcessInput(input int, b *types.Batch) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("temporal join: no input %d", input)
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.admit(r) {
			continue
		}
		var err error
		if input == 0 {
			err = o.left(r)
		} else {
			o.right(r)
		}
		if err != nil {
			return err
		}
		if err := o.flushIfFull(); err != nil {
			return err
		}
	}
	return o.flush()
}

func (o *Temporal) left(r *types.Row) error {
	if !r.Kind.IsAccumulate() {
		return fmt.Errorf("temporal join: the left input sent a retraction (%s); an event-time temporal join takes an append-only left input", r.Kind)
	}
	tv := r.Vals[o.tc.LeftTime]
	key, null := o.key(o.cfg.LeftKeys, r.Vals)
	if null || tv.IsNull() {
		if o.cfg.Kind == Left {
			o.emitPadded(0, r.Vals, types.Insert, 1)
		}
		return nil
	}
	t := tv.Int()
	if t <= o.wm {
		return o.probe(key, r.Vals, t)
	}
	o.seq++
	w := &lwait{vals: append([]types.Value(nil), r.Vals...), ts: t, seq: o.seq, key: key}
	heap.Push(&o.waiting, w)
	if o.store != nil {
		o.added = append(o.added, w)
	}
	return nil
}

// probe joins a left row at time t with the key's version at t.
func (o *Temporal) probe(key string, vals []types.Value, t int64) error {
	var vs []version
	if l := o.versions[key]; l != nil {
		vs = l.vs
	}
	i := sort.Search(len(vs), func(i int) bool { return vs[i].ts > t }) - 1
	if i >= 0 && !vs[i].deleted {
		ok, err := o.residual(0, vals, vs[i].vals)
		if err != nil {
			return err
		}
		if ok {
			o.emitJoined(0, vals, vs[i].vals, types.Insert, 1)
			return nil
		}
	}
	if o.cfg.Kind == Left {
		o.emitPadded(0, vals, types.Insert, 1)
	}
	return nil
}

func (o *Temporal) right(r *types.Row) {
	if r.Kind == types.UpdateBefore {
		return
	}
	tv := r.Vals[o.tc.RightTime]
	key, null := o.key(o.cfg.RightKeys, r.Vals)
	if null || tv.IsNull() {
		return
	}
	v := version{vals: append([]types.Value(nil), r.Vals...), ts: tv.Int(), deleted: r.Kind == types.Delete}
	l := o.versions[key]
	if l == nil {
		l = &vlist{key: key}
		o.versions[key] = l
	}
	vs := l.vs
	if n := len(vs); n == 0 || vs[n-1].ts < v.ts {
		vs = append(vs, v) // in time order: the common case
	} else {
		i := sort.Search(n, func(i int) bool { return vs[i].ts > v.ts })
		if i > 0 && vs[i-1].ts == v.ts {
			vs[i-1] = v // the later of two versions at one time counts
		} else {
			vs = append(vs, version{})
			copy(vs[i+1:], vs[i:])
			vs[i] = v
		}
	}
	l.vs = vs
	if !l.pruned && l.needsPrune() {
		l.pruned = true
		o.prune = append(o.prune, l)
	}
	o.markDirty(l)
}

func (o *Temporal) markDirty(l *vlist) {
	if !l.dirty && o.store != nil {
		l.dirty = true
		o.dirty = append(o.dirty, l)
	}
}

// Watermark implements exec.Operator: left rows up to wm are joined, in
// time order; versions no longer needed are dropped; wm goes on.
func (o *Temporal) Watermark(wm int64) error {
	if wm <= o.wm {
		return nil
	}
	o.wm = wm
	for len(o.waiting) > 0 && o.waiting[0].ts <= wm {
		w := heap.Pop(&o.waiting).(*lwait)
		w.done = true
		if w.stored {
			o.gone = append(o.gone, w.seq)
		}
		if err := o.probe(w.key, w.vals, w.ts); err != nil {
			return err
		}
		if err := o.flushIfFull(); err != nil {
			return err
		}
	}
	keep := o.prune[:0]
	for _, l := range o.prune {
		vs := l.vs
		i := sort.Search(len(vs), func(i int) bool { return vs[i].ts > wm }) - 1
		if i >= 0 && vs[i].deleted {
			i++ // nothing at the watermark: the deletion is not needed either
		}
		if i > 0 {
			n := copy(vs, vs[i:])
			clear(vs[n:])
			l.vs = vs[:n]
			o.markDirty(l)
		}
		switch {
		case len(l.vs) == 0:
			delete(o.versions, l.key)
			l.pruned = false
		case !l.needsPrune():
			l.pruned = false
		default:
			keep = append(keep, l)
		}
	}
	clear(o.prune[len(keep):])
	o.prune = keep
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Watermark(wm)
}

// Close implements exec.Operator.
func (o *Temporal) Close() error {
	o.versions, o.waiting = nil, nil
	return o.cfg.Next.Close()
}

// Store layout:
//   - 'v' + key: the key's versions, uvarint count, one flag byte each
//     (1: a deletion), then the rows (rowcodec);
//   - 'w' + big-endian seq: a waiting left row (rowcodec).

// Checkpoint implements exec.Checkpointer.
func (o *Temporal) Checkpoint() error {
	if o.store == nil {
		return nil // nothing is tracked without a store
	}
	var kbuf, vbuf []byte
	for i, l := range o.dirty {
		o.dirty[i] = nil
		l.dirty = false
		kbuf = append(append(kbuf[:0], 'v'), l.key...)
		if len(l.vs) == 0 {
			if err := o.store.Delete(kbuf); err != nil {
				return err
			}
			continue
		}
		vbuf = binary.AppendUvarint(vbuf[:0], uint64(len(l.vs)))
		enc := o.rcodec.NewEncoder()
		for _, v := range l.vs {
			flag := byte(0)
			if v.deleted {
				flag = 1
			}
			vbuf = append(vbuf, flag)
			if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: v.vals}); err != nil {
				return err
			}
		}
		vbuf = append(vbuf, enc.Bytes()...)
		if err := o.store.Put(kbuf, vbuf); err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	for _, seq := range o.gone {
		if err := o.store.Delete(waitKey(kbuf[:0], seq)); err != nil {
			return err
		}
	}
	o.gone = o.gone[:0]
	for i, w := range o.added {
		o.added[i] = nil
		if w.done {
			continue
		}
		enc := o.lcodec.NewEncoder()
		if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: w.vals}); err != nil {
			return err
		}
		if err := o.store.Put(waitKey(kbuf[:0], w.seq), enc.Bytes()); err != nil {
			return err
		}
		w.stored = true
	}
	o.added = o.added[:0]
	return o.store.Checkpoint()
}

func waitKey(dst []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, 'w'), seq)
}

func (o *Temporal) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		switch {
		case len(k) >= 1 && k[0] == 'v':
			n, m := binary.Uvarint(v)
			if m <= 0 || n == 0 || uint64(len(v)-m) < n {
				ferr = errors.New("corrupt versions")
				return false
			}
			flags := v[m : m+int(n)]
			batch := types.NewBatch(int(n), len(o.cfg.Right))
			got, err := o.rcodec.Decode(batch, v[m+int(n):])
			if err != nil || got != int(n) {
				ferr = fmt.Errorf("corrupt versions: %v", err)
				return false
			}
			key := string(k[1:])
			vs := make([]version, n)
			for i, r := range batch.Rows {
				vs[i] = version{vals: r.Vals, ts: r.Vals[o.tc.RightTime].Int(), deleted: flags[i] == 1}
			}
			l := &vlist{key: key, vs: vs}
			o.versions[key] = l
			if l.needsPrune() {
				l.pruned = true
				o.prune = append(o.prune, l)
			}
		case len(k) == 9 && k[0] == 'w':
			batch := types.NewBatch(1, len(o.cfg.Left))
			got, err := o.lcodec.Decode(batch, v)
			if err != nil || got != 1 {
				ferr = fmt.Errorf("corrupt waiting row: %v", err)
				return false
			}
			vals := batch.Rows[0].Vals
			key, _ := o.key(o.cfg.LeftKeys, vals)
			w := &lwait{vals: vals, ts: vals[o.tc.LeftTime].Int(), seq: binary.BigEndian.Uint64(k[1:]), key: key, stored: true}
			heap.Push(&o.waiting, w)
			o.seq = max(o.seq, w.seq)
		default:
			ferr = fmt.Errorf("corrupt key %q", k)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
