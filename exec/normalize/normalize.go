// Package normalize turns an upsert stream into a full changelog, as
// Flink's ChangelogNormalize does after an upsert source (upsert-kafka).
//
// An upsert stream carries, per primary key, the key's new row (+I or +U)
// or its deletion (-D, whose other columns may be NULL: a tombstone has
// only the key). Operators downstream need to retract what a key had
// before: the operator keeps the last row of every key and emits
//   - +I for a key's first row,
//   - -U (the row kept) and +U (the new one) for a later row, nothing when
//     the new row equals the kept one,
//   - -D with the row kept for a deletion, nothing for a key it does not
//     hold.
//
// -U input rows are ignored (the +U that follows carries the new row).
// Output rows carry no origin (a -U/+U pair comes from one input row);
// replays are dropped by the input's origin offsets. State: one row per
// live key, checkpointed for the keys changed since the last checkpoint.
package normalize

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// Config configures a normalizer.
type Config struct {
	ID string
	// Keys are the primary key columns.
	Keys []int
	// Types are the row's column types.
	Types []types.Type
	Next  exec.Operator
}

type entry struct {
	vals  []types.Value
	dirty bool
	size  int64 // estimated memory, with the key and the map slot
}

// entryOverhead estimates the memory of an entry besides its values and
// key: the struct and its map slot.
const entryOverhead = int64(unsafe.Sizeof(entry{})) + 48

// setSize (re)estimates the memory of e under key and counts the change
// in the operator's total.
func (o *Operator) setSize(e *entry, key string) {
	size := entryOverhead + int64(len(key)) + types.ValuesSize(e.vals)
	o.bytes += size - e.size
	e.size = size
}

// Operator is a running normalizer.
type Operator struct {
	cfg   Config
	rows  map[string]*entry
	dirty []string
	codec *rowcodec.Codec

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics

	out    *types.Batch
	keyBuf []byte

	// The estimated memory of the rows kept, and the gauge that reports
	// it to the job's metrics.
	bytes int64
	gauge *exec.StateGauge
}

// New returns a normalizer.
func New(cfg Config) (*Operator, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("changelog normalize: no primary key")
	}
	c, err := rowcodec.New(cfg.Types)
	if err != nil {
		return nil, fmt.Errorf("changelog normalize: %w", err)
	}
	return &Operator{cfg: cfg, rows: map[string]*entry{}, codec: c}, nil
}

// Open implements exec.Operator: it restores the last checkpoint.
func (o *Operator) Open(ctx *exec.Context) error {
	o.out = types.NewBatch(256, len(o.cfg.Types))
	if ctx != nil {
		o.metrics = ctx.Metrics
	}
	o.gauge = ctx.StateGauge("ChangelogNormalize")
	if err := exec.OpenState(ctx, o.cfg.ID, "changelog normalize "+o.cfg.ID, &o.store, &o.offsets, o.restore); err != nil {
		return err
	}
	o.gauge.Set(int64(len(o.rows)), o.bytes)
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
		o.row(r)
		if len(o.out.Rows) >= 256 {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
	o.gauge.Set(int64(len(o.rows)), o.bytes)
	return o.flush()
}

func (o *Operator) row(r *types.Row) {
	if r.Kind == types.UpdateBefore {
		return
	}
	o.keyBuf = o.keyBuf[:0]
	for _, k := range o.cfg.Keys {
		o.keyBuf = types.AppendKey(o.keyBuf, r.Vals[k])
	}
	e := o.rows[string(o.keyBuf)]
	if r.Kind == types.Delete {
		if e == nil {
			return
		}
		o.emit(types.Delete, e.vals)
		delete(o.rows, string(o.keyBuf))
		o.bytes -= e.size
		if o.store != nil {
			o.dirty = append(o.dirty, string(o.keyBuf)) // the store forgets it
		}
		return
	}
	switch {
	case e == nil:
		e = &entry{vals: append([]types.Value(nil), r.Vals...)}
		o.rows[string(o.keyBuf)] = e
		o.setSize(e, string(o.keyBuf))
		o.emit(types.Insert, e.vals)
	case equal(e.vals, r.Vals):
		return
	default:
		o.emit(types.UpdateBefore, e.vals)
		copy(e.vals, r.Vals)
		o.setSize(e, string(o.keyBuf))
		o.emit(types.UpdateAfter, e.vals)
	}
	if !e.dirty && o.store != nil {
		e.dirty = true
		o.dirty = append(o.dirty, string(o.keyBuf))
	}
}

func equal(a, b []types.Value) bool {
	for i := range a {
		if a[i].IsNull() != b[i].IsNull() || !a[i].IsNull() && (a[i].Kind() != b[i].Kind() || !types.Equal(a[i], b[i])) {
			return false
		}
	}
	return true
}

func (o *Operator) emit(kind types.RowKind, vals []types.Value) {
	copy(o.out.AddRow(kind, types.NoOrigin, len(vals)), vals)
}

func (o *Operator) flush() error {
	if len(o.out.Rows) == 0 {
		return nil
	}
	err := o.cfg.Next.Process(o.out)
	o.out.Reset()
	return err
}

// Watermark implements exec.Operator.
func (o *Operator) Watermark(wm int64) error { return o.cfg.Next.Watermark(wm) }

// Finish implements exec.Operator.
func (o *Operator) Finish() error { return o.cfg.Next.Finish() }

// Close implements exec.Operator.
func (o *Operator) Close() error {
	o.rows = nil
	return o.cfg.Next.Close()
}

// Checkpoint implements exec.Checkpointer. Store layout: one record per
// key, key = the encoded primary key, value = the row (rowcodec).
func (o *Operator) Checkpoint() error {
	if o.store == nil {
		return nil
	}
	for i, key := range o.dirty {
		o.dirty[i] = ""
		e := o.rows[key]
		if e == nil {
			if err := o.store.Delete([]byte(key)); err != nil {
				return err
			}
			continue
		}
		if !e.dirty {
			continue // written already (a key listed twice)
		}
		e.dirty = false
		enc := o.codec.NewEncoder()
		if err := enc.Append(types.Row{Kind: types.Insert, Origin: types.NoOrigin, Vals: e.vals}); err != nil {
			return err
		}
		if err := o.store.Put([]byte(key), enc.Bytes()); err != nil {
			return err
		}
	}
	o.dirty = o.dirty[:0]
	return o.store.Checkpoint()
}

func (o *Operator) restore() error {
	var ferr error
	err := o.store.Scan(nil, func(k, v []byte) bool {
		b := types.NewBatch(1, len(o.cfg.Types))
		got, err := o.codec.Decode(b, v)
		if err != nil || got != 1 {
			ferr = fmt.Errorf("corrupt row: %v", err)
			return false
		}
		e := &entry{vals: b.Rows[0].Vals}
		o.rows[string(k)] = e
		o.setSize(e, string(k))
		return true
	})
	if err != nil {
		return err
	}
	return ferr
}
