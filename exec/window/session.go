package window

import (
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// sessionAggregate aggregates SESSION windows. Sessions are tracked per
// partition key; inside a session there is one accumulator group per full
// grouping key. When sessions merge, the accumulators of every key in them
// merge.
type sessionAggregate struct {
	aggBase
	// single is set when the partition key determines the full key
	// (PartitionKeys nil or the same columns as Keys): a session then
	// holds one entry and needs no map.
	single  bool
	partCol []int
	set     *sessionSet[sessionAcc]
	fired   []*session[sessionAcc]
}

// sessionAcc is the accumulators of one session.
type sessionAcc struct {
	one *entry            // single mode
	m   map[string]*entry // by full key otherwise
}

func newSessionAggregate(b aggBase) *sessionAggregate {
	op := &sessionAggregate{aggBase: b}
	pk := b.cfg.PartitionKeys
	op.single = pk == nil || sameColumns(pk, b.keys)
	op.partCol = pk
	if op.single {
		op.partCol = b.keys
	}
	op.set = newSessionSet(b.cfg.Spec.Gap, b.zone, op.mergeAcc)
	return op
}

func sameColumns(a, b []int) bool {
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	for _, c := range b {
		if !slices.Contains(a, c) {
			return false
		}
	}
	return true
}

// mergeAcc folds the accumulators of src into dst, as two sessions merge.
func (op *sessionAggregate) mergeAcc(dst, src *sessionAcc) error {
	if op.single {
		if dst.one == nil {
			dst.one, src.one = src.one, nil
			return nil
		}
		if src.one != nil {
			if err := dst.one.group.Merge(src.one.group); err != nil {
				return fmt.Errorf("%s: cannot merge sessions: %w", op.name, err)
			}
			op.release(src.one)
			src.one = nil
		}
		return nil
	}
	for k, e := range src.m {
		if d := dst.m[k]; d != nil {
			if err := d.group.Merge(e.group); err != nil {
				return fmt.Errorf("%s: cannot merge sessions: %w", op.name, err)
			}
			op.release(e)
			continue
		}
		dst.m[k] = e
	}
	src.m = nil
	return nil
}

func (op *sessionAggregate) newAcc(a *sessionAcc) {
	if !op.single {
		a.m = make(map[string]*entry)
	}
}

// Open implements exec.Operator. It attaches the operator's store,
// restores the sessions of the last checkpoint, and opens downstream.
func (op *sessionAggregate) Open(ctx *exec.Context) error {
	if err := op.attach(ctx); err != nil {
		return err
	}
	if err := op.restore(); err != nil {
		return fmt.Errorf("cannot open %s: %w", op.name, err)
	}
	return op.next.Open(ctx)
}

// Process implements exec.Operator.
func (op *sessionAggregate) Process(b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		t, ok, err := op.admit(r)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		pkey := op.appendKey(op.partCol, r.Vals)
		s, err := op.set.add(pkey, t, op.wm, op.newAcc)
		if err != nil {
			return err
		}
		if s == nil {
			op.late()
			continue
		}
		var e *entry
		if op.single {
			if e = s.data.one; e == nil {
				// The partition key string is shared with the
				// partition: no extra copy.
				e = op.newEntry(s.part.key, r.Vals)
				s.data.one = e
			}
		} else {
			key := op.appendKey(op.keys, r.Vals)
			if e = s.data.m[string(key)]; e == nil {
				k := string(key)
				e = op.newEntry(k, r.Vals)
				s.data.m[k] = e
			}
		}
		if err := e.group.Add(op.calls, r.Vals, op.scratch); err != nil {
			return fmt.Errorf("%s: cannot accumulate: %w", op.name, err)
		}
	}
	return nil
}

// Watermark implements exec.Operator: it fires every session whose last
// instant (end - 1 ms) is at or before wm, then forwards wm.
func (op *sessionAggregate) Watermark(wm int64) error {
	if wm > op.wm && !op.ended {
		if wm == exec.MaxWatermark {
			op.endMark = max(op.wm, op.set.lastInstant())
		}
		op.wm = wm
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
// is treated as ended all the same: every open session fires first.
func (op *sessionAggregate) Finish() error {
	if !op.ended && !op.stopping() {
		op.endMark = max(op.wm, op.set.lastInstant())
		op.wm = exec.MaxWatermark
		if err := op.fire(exec.MaxWatermark); err != nil {
			return err
		}
		op.ended = true
	}
	return op.next.Finish()
}

// Close implements exec.Operator.
func (op *sessionAggregate) Close() error {
	op.set, op.fired, op.free = nil, nil, nil
	return op.next.Close()
}

func (op *sessionAggregate) fire(wm int64) error {
	if !op.set.pending(wm) {
		return nil
	}
	op.fired = op.set.fire(wm, op.fired[:0])
	for _, s := range op.fired {
		if op.single {
			if e := s.data.one; e != nil {
				if err := op.emit(s.start, s.end, e); err != nil {
					return err
				}
				op.release(e)
			}
			continue
		}
		for _, e := range op.sortEntries(s.data.m) {
			if err := op.emit(s.start, s.end, e); err != nil {
				return err
			}
			op.release(e)
		}
	}
	clear(op.fired)
	return op.flush()
}
