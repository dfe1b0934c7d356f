// Package rank runs Top-N: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY
// ...) bounded by N, which is also deduplication for N = 1, and the same
// with RANK() or DENSE_RANK() (see Type).
//
// Output, as Flink's: each output row is an input row followed by its row
// number. A row that enters the top N is emitted (+I) at its number; the
// rows after it move down one (-U at the old number, +U at the new one),
// and the last is pushed out (-D). A row retracted from the top N is
// deleted (-D), the rows after it move up, and the next row of the
// partition, if one is kept, comes in at N (+I). With RANK and DENSE_RANK
// rows that tie share a number, so that more than N rows may be emitted; a
// change emits the row it is about first (+I, -D), then the rows whose
// number changed (-U, +U), entered (+I) or left (-D), in order.
//
// Invariants:
//   - Rows of a partition are kept in order; rows that compare equal keep
//     their arrival order (a later row ranks after).
//   - With an append-only input only the top N rows are kept: a row pushed
//     out can never come back. With an updating input every row is kept,
//     since a retraction can bring one back.
//   - Replays are dropped by origin offset, as in every stateful operator.
//   - Checkpoint writes the partitions changed since the last one.
package rank

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// SortKey is an ORDER BY column of the window.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Config configures a Top-N.
type Config struct {
	ID        string
	Partition []int
	Order     []SortKey
	Limit     int
	// First, if above 1, is the lowest number emitted: rows numbered
	// First to Limit are (rn BETWEEN First AND Limit, as Flink's rank
	// range). A row that moves across First enters (+I) or leaves (-D).
	First int
	// Types are the input's column types.
	Types []types.Type
	// KeepAll keeps every row (an updating input).
	KeepAll bool
	// Type is the numbering function (ROW_NUMBER by default).
	Type Type
	// NoNumbers: the row number is not read downstream. Rows that move
	// within the top N are then not updated: only rows that enter (+I) or
	// leave (-D) are emitted, with 0 as their number.
	NoNumbers bool
	Next      exec.Operator
	// TTL, if positive, forgets a partition not written for this long in
	// processing time, without output ('table.exec.state.ttl'), as Flink
	// does; its next row starts it over.
	TTL time.Duration
}

type entry struct {
	vals []types.Value
	enc  string // identity, for retractions
	num  int    // RANK, DENSE_RANK: the number last emitted; 0 if not emitted
}

type partition struct {
	rows    []*entry
	dirty   bool
	written int64 // processing time (µs) of the last write, with a TTL
}

// Operator is a running Top-N.
type Operator struct {
	cfg   Config
	parts map[string]*partition
	dirty []string
	codec *rowcodec.Codec

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics

	out    *types.Batch
	keyBuf []byte
	encBuf []byte
	// before is the number of the -U row held back, with a First, until
	// its +U says whether the row stays in the range.
	before int

	ttl  ttl
	size stateSize
}

// New returns a Top-N operator.
func New(cfg Config) (*Operator, error) {
	if cfg.Limit < 1 {
		return nil, errors.New("rank: the row number needs a bound (N >= 1)")
	}
	if cfg.First > cfg.Limit {
		return nil, fmt.Errorf("rank: the lowest number emitted (%d) is above the highest (%d)", cfg.First, cfg.Limit)
	}
	c, err := rowcodec.New(cfg.Types)
	if err != nil {
		return nil, fmt.Errorf("rank: %w", err)
	}
	return &Operator{cfg: cfg, parts: map[string]*partition{}, codec: c}, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	o.out = types.NewBatch(256, len(o.cfg.Types)+1)
	if ctx != nil {
		o.metrics = ctx.Metrics
	}
	o.size.gauge = ctx.StateGauge("Top-N")
	if err := exec.OpenState(ctx, o.cfg.ID, "Top-N "+o.cfg.ID, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	o.size.report(len(o.parts))
	o.ttl.open(o, ctx)
	return o.cfg.Next.Open(ctx)
}

// Process implements exec.Operator.
func (o *Operator) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if !o.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
			o.metrics.Replayed()
			continue
		}
		if r.Kind == types.Insert || r.Kind == types.UpdateAfter {
			o.insert(r.Vals)
		} else {
			o.retract(r.Vals)
		}
		o.size.settle()
		o.ttl.written(o, r.Vals)
		if len(o.out.Rows) >= 256 {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
	o.size.report(len(o.parts))
	return o.flush()
}

func (o *Operator) flush() error {
	if len(o.out.Rows) == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}

// partition returns the partition of a row; its key stays in keyBuf until
// the next call.
func (o *Operator) partition(vals []types.Value, create bool) *partition {
	o.keyBuf = o.keyBuf[:0]
	for _, c := range o.cfg.Partition {
		o.keyBuf = types.AppendKey(o.keyBuf, vals[c])
	}
	p := o.parts[string(o.keyBuf)]
	if p == nil && create {
		p = &partition{}
		o.parts[string(o.keyBuf)] = p
		o.size.addPart(string(o.keyBuf))
	}
	o.size.looked(p)
	return p
}

// touch marks the partition whose key is in keyBuf as changed.
func (o *Operator) touch(p *partition) {
	if !p.dirty {
		p.dirty = true
		o.dirty = append(o.dirty, string(o.keyBuf))
	}
}

// compare orders two rows by the window's ORDER BY.
func (o *Operator) compare(a, b []types.Value) int { return Compare(o.cfg.Order, a, b) }

// Compare orders two rows by ORDER BY keys: negative when a ranks before
// b, zero when they tie.
func Compare(order []SortKey, a, b []types.Value) int {
	for _, k := range order {
		x, y := a[k.Col], b[k.Col]
		if x.IsNull() || y.IsNull() {
			if x.IsNull() == y.IsNull() {
				continue
			}
			if x.IsNull() == k.NullsFirst {
				return -1
			}
			return 1
		}
		c := types.Compare(x, y)
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (o *Operator) emit(kind types.RowKind, vals []types.Value, num int) {
	if o.cfg.First > 1 {
		// Rows numbered below First are not emitted: a row that moves
		// across it enters or leaves. A -U is always followed by the +U of
		// the same row.
		switch kind {
		case types.UpdateBefore:
			o.before = num
			return
		case types.UpdateAfter:
			was, is := o.before >= o.cfg.First, num >= o.cfg.First
			switch {
			case was && is:
				o.write(types.UpdateBefore, vals, o.before)
				o.write(types.UpdateAfter, vals, num)
			case was:
				o.write(types.Delete, vals, o.before)
			case is:
				o.write(types.Insert, vals, num)
			}
			return
		}
		if num < o.cfg.First {
			return
		}
	}
	o.write(kind, vals, num)
}

// write appends an output row: vals and its number.
func (o *Operator) write(kind types.RowKind, vals []types.Value, num int) {
	if o.cfg.NoNumbers {
		if kind == types.UpdateBefore || kind == types.UpdateAfter {
			return // a move within the top N
		}
		num = 0
	}
	out := o.out.AddRow(kind, types.Origin{Part: -1}, len(vals)+1)
	copy(out, vals)
	out[len(vals)] = types.IntValue(types.KindBigInt, int64(num))
}

func (o *Operator) insert(vals []types.Value) {
	p := o.partition(vals, true)
	if o.cfg.Type != RowNumber {
		o.insertRanked(p, vals)
		return
	}
	n := o.cfg.Limit
	// The first position whose row ranks after the new one.
	pos := sort.Search(len(p.rows), func(i int) bool { return o.compare(p.rows[i].vals, vals) > 0 })
	if pos >= n && !o.cfg.KeepAll {
		return // outside the top N, and never to come back
	}
	o.touch(p)
	e := &entry{vals: append([]types.Value(nil), vals...)}
	if o.cfg.KeepAll { // only retractions look rows up
		e.enc = o.identity(vals)
	}
	o.size.kept(e)
	p.rows = append(p.rows, nil)
	copy(p.rows[pos+1:], p.rows[pos:])
	p.rows[pos] = e
	if pos < n {
		// The rows after it move down; the one at N leaves.
		for i := min(len(p.rows)-1, n); i > pos; i-- {
			r := p.rows[i]
			if i == n {
				o.emit(types.Delete, r.vals, n)
			} else {
				o.emit(types.UpdateBefore, r.vals, i)
				o.emit(types.UpdateAfter, r.vals, i+1)
			}
		}
		o.emit(types.Insert, vals, pos+1)
	}
	if !o.cfg.KeepAll && len(p.rows) > n {
		for i := n; i < len(p.rows); i++ {
			p.rows[i] = nil
		}
		p.rows = p.rows[:n]
	}
}

func (o *Operator) retract(vals []types.Value) {
	p := o.partition(vals, false)
	if p == nil {
		return // a retraction of a row never kept
	}
	enc := o.identity(vals)
	pos := -1
	for i, e := range p.rows {
		if e.enc == enc {
			pos = i
			break
		}
	}
	if pos < 0 {
		return
	}
	o.touch(p)
	if o.cfg.Type != RowNumber {
		o.retractRanked(p, pos)
		return
	}
	n := o.cfg.Limit
	gone := p.rows[pos]
	copy(p.rows[pos:], p.rows[pos+1:])
	p.rows[len(p.rows)-1] = nil
	p.rows = p.rows[:len(p.rows)-1]
	if pos >= n {
		return // it was not in the top N
	}
	o.emit(types.Delete, gone.vals, pos+1)
	// The rows after it move up; the next one, if kept, comes in at N.
	for i := pos; i < min(len(p.rows), n); i++ {
		r := p.rows[i]
		if i == n-1 {
			o.emit(types.Insert, r.vals, n)
		} else {
			o.emit(types.UpdateBefore, r.vals, i+2)
			o.emit(types.UpdateAfter, r.vals, i+1)
		}
	}
}

func (o *Operator) identity(vals []types.Value) string {
	o.encBuf = o.encBuf[:0]
	for _, v := range vals {
		o.encBuf = types.AppendKey(o.encBuf, v)
	}
	return string(o.encBuf)
}

// Watermark implements exec.Operator.
func (o *Operator) Watermark(wm int64) error { return o.cfg.Next.Watermark(wm) }

// Finish implements exec.Operator.
func (o *Operator) Finish() error {
	if err := o.flush(); err != nil {
		return err
	}
	return o.cfg.Next.Finish()
}

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.parts = nil
	return o.cfg.Next.Close()
}

// Store layout: one record per partition, key = the partition key, value =
// uvarint rows then the rows in order (rowcodec).

// Checkpoint implements exec.Checkpointer.
func (o *Operator) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	if err := o.ttl.forget(o.store); err != nil {
		return err
	}
	var vbuf []byte
	for _, key := range o.dirty {
		p := o.parts[key]
		if p == nil {
			continue
		}
		p.dirty = false
		if len(p.rows) == 0 {
			delete(o.parts, key)
			o.size.removePart(key, p)
			if err := o.store.Delete([]byte(key)); err != nil {
				return err
			}
			continue
		}
		vbuf = binary.AppendUvarint(vbuf[:0], uint64(len(p.rows)))
		enc := o.codec.NewEncoder()
		for _, e := range p.rows {
			if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: -1}, Vals: e.vals}); err != nil {
				return err
			}
		}
		vbuf = append(vbuf, enc.Bytes()...)
		if err := o.store.Put([]byte(key), vbuf); err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	o.size.report(len(o.parts))
	return o.store.Checkpoint()
}

func (o *Operator) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		n, m := binary.Uvarint(v)
		if m <= 0 {
			ferr = errors.New("corrupt record")
			return false
		}
		b := types.NewBatch(int(n), len(o.cfg.Types))
		got, err := o.codec.Decode(b, v[m:])
		if err != nil || got != int(n) {
			ferr = fmt.Errorf("corrupt rows: %v", err)
			return false
		}
		p := &partition{}
		for _, r := range b.Rows {
			e := &entry{vals: r.Vals}
			if o.cfg.KeepAll {
				e.enc = o.identity(r.Vals)
			}
			p.rows = append(p.rows, e)
			o.size.kept(e)
		}
		if o.cfg.Type != RowNumber {
			o.renumber(p, 0, false)
		}
		o.parts[string(k)] = p
		o.size.addPart(string(k))
		o.size.rows += int64(len(p.rows))
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
