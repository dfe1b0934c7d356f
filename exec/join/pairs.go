package join

import (
	"errors"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// pairs is what both joins share: the state store and its offsets, the
// output batch, and building keys, checking the residual condition and
// emitting joined or padded rows.
type pairs struct {
	cfg       Config
	leftWidth int

	store   state.Store
	offsets *state.Offsets
	metrics *exec.Metrics

	out     *types.Batch
	scratch []types.Value
	keyBuf  []byte
}

func newPairs(cfg Config) pairs {
	return pairs{cfg: cfg, leftWidth: len(cfg.Left), scratch: make([]types.Value, len(cfg.Left)+len(cfg.Right))}
}

// open opens the state store of the operator (what names it in errors)
// and restores it, then opens downstream.
func (p *pairs) open(ctx *exec.Context, what string, restore func() error) error {
	p.out = types.NewBatch(256, len(p.scratch))
	if ctx != nil {
		p.metrics = ctx.Metrics
	}
	if err := exec.OpenState(ctx, p.cfg.ID, what+" "+p.cfg.ID, &p.store, &p.offsets, restore); err != nil {
		return err
	}
	return p.cfg.Next.Open(ctx)
}

// Process implements exec.Operator; a join's rows come through
// ProcessInput.
func (p *pairs) Process(*types.Batch) error {
	return errors.New("join: rows must say which input they come from (ProcessInput)")
}

// admit drops a replayed row (one whose origin offset the state holds).
func (p *pairs) admit(r *types.Row) bool {
	if p.offsets.Admit(r.Origin.Part, r.Origin.Offset) {
		return true
	}
	p.metrics.Replayed()
	return false
}

// flushIfFull sends the output batch on once it is large.
func (p *pairs) flushIfFull() error {
	if len(p.out.Rows) >= 256 {
		return p.flush()
	}
	return nil
}

func (p *pairs) flush() error {
	if len(p.out.Rows) == 0 {
		return nil
	}
	err := p.cfg.Next.Process(p.out)
	p.out.Reset()
	return err
}

// key returns the encoded join key of a row (its columns keys), and
// whether a key column is NULL (a NULL key matches nothing, unless the
// keys are NULL-safe).
func (p *pairs) key(keys []int, vals []types.Value) (string, bool) {
	p.keyBuf = p.keyBuf[:0]
	for _, k := range keys {
		if vals[k].IsNull() && !p.cfg.NullSafe {
			return "", true
		}
		p.keyBuf = types.AppendKey(p.keyBuf, vals[k])
	}
	return string(p.keyBuf), false
}

// residual evaluates the rest of the condition on a row of side input and
// a row of the other side.
func (p *pairs) residual(input int, mine, theirs []types.Value) (bool, error) {
	if p.cfg.Residual == nil {
		return true, nil
	}
	l, r := mine, theirs
	if input == 1 {
		l, r = theirs, mine
	}
	copy(p.scratch, l)
	copy(p.scratch[len(l):], r)
	return p.cfg.Residual(p.scratch)
}

// emitJoined emits n copies of the pair, left row first.
func (p *pairs) emitJoined(input int, mine, theirs []types.Value, kind types.RowKind, n int) {
	l, r := mine, theirs
	if input == 1 {
		l, r = theirs, mine
	}
	for range n {
		vals := p.out.AddRow(kind, types.Origin{Part: -1}, len(l)+len(r))
		copy(vals, l)
		copy(vals[len(l):], r)
	}
}

// emitPadded emits n copies of a row of side input with NULLs for the
// other side.
func (p *pairs) emitPadded(input int, vals []types.Value, kind types.RowKind, n int) {
	for range n {
		out := p.out.AddRow(kind, types.Origin{Part: -1}, len(p.scratch))
		for i := range out {
			out[i] = types.Value{}
		}
		if input == 0 {
			copy(out, vals)
		} else {
			copy(out[p.leftWidth:], vals)
		}
	}
}

// emitLeft emits n copies of a left row alone (SEMI and ANTI joins).
func (p *pairs) emitLeft(vals []types.Value, kind types.RowKind, n int) {
	for range n {
		copy(p.out.AddRow(kind, types.Origin{Part: -1}, p.leftWidth), vals)
	}
}

// Finish implements exec.Operator.
func (p *pairs) Finish() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.cfg.Next.Finish()
}
