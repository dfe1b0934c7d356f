package exec

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/types"
)

// tee is the output of a trunk's chain (see Stage.Trunk): it hands every
// batch, watermark and end of input to the heads of its branches' chains,
// in order, and idleness and checkpoint barriers straight to the branches'
// edges, which are what the source task would tell of them had each
// branch a source of its own. The batch is the same for every branch: no
// operator changes the batch it is given (see Operator.Process). A branch
// whose rows have origin numbers of their own (see Graph.numbered) gets
// them in a batch of its own whose rows share the batch's values.
//
// With a filter (Stage.Filter), the branches whose WHERE it evaluates
// (rules[k] >= 0) get only the rows their rule keeps, in a batch of their
// own, and no call at all for a batch of which they keep nothing.
type tee struct {
	heads []Operator
	edges []Output
	// shifts are what each branch adds to the origin partitions of the
	// rows; buf is the batch handed to a branch with a shift or a rule
	// (one after the other: no branch keeps the batch it is given).
	shifts []int32
	buf    types.Batch
	// filter, if set, selects the rows of the branches with a rule.
	filter BranchFilter
	rules  []int
	sel    Selection
	// With a filter: the heads without a rule, and the heads of each
	// rule, so that a batch costs the rules that keep rows of it, not all
	// of them (thousands of rules keep nothing of most batches).
	plain   []int
	byRule  [][]int
	indexed bool
	// With a filter: heads whose first operator is a Calc that only
	// picks columns (a rule's SELECT list) get their rows projected
	// here and handed to the Calc's next operator. The projection is
	// made once a row for all the heads that pick the same columns, and
	// their batches share its values: a row that several rules keep is
	// copied once, not once a rule. proj[k] is head k's projection (nil
	// for the others) and after[k] the operator after its Calc; meter[k]
	// the meter in front of the Calc, if any, which counts the rows the
	// tee hands past it.
	proj  []*teeProjection
	after []Operator
	meter []*Meter
	projs []*teeProjection
}

// teeProjection is the rows of the batch at hand projected on cols, made
// as the first head that needs a row asks for it.
type teeProjection struct {
	cols []int
	out  types.Batch
	// at[i] is 1 + the index in out of row i of the batch (0: not made).
	at []int32
}

// row returns row i of b projected.
func (p *teeProjection) row(b *types.Batch, i int32) []types.Value {
	if a := p.at[i]; a > 0 {
		return p.out.Rows[a-1].Vals
	}
	in := b.Rows[i].Vals
	vals := p.out.AddRow(types.Insert, types.Origin{}, len(p.cols))
	for j, c := range p.cols {
		vals[j] = in[c]
	}
	p.at[i] = int32(len(p.out.Rows))
	return vals
}

// reset readies p for a batch of n rows.
func (p *teeProjection) reset(n int) {
	if len(p.out.Rows) > 0 {
		clear(p.at)
		p.out.Truncate()
	}
	if cap(p.at) < n {
		p.at = make([]int32, n)
	}
	p.at = p.at[:n]
}

// projects returns the columns head h picks and the operator after its
// Calc, if h is a Calc that only picks columns (its Process, which the
// tee then stands in for, is all it does with rows), or a Meter in front
// of one (returned too: it counts the rows handed past it).
func projects(h Operator) ([]int, Operator, *Meter, bool) {
	m, metered := h.(*Meter)
	if metered {
		h = m.Next
	}
	c, ok := h.(*Calc)
	if !ok || c.Filter != nil || c.NextRow != nil || c.Projs == nil || len(c.Cols) != len(c.Projs) {
		return nil, nil, nil, false
	}
	for _, col := range c.Cols {
		if col < 0 {
			return nil, nil, nil, false
		}
	}
	return c.Cols, c.Next, m, true
}

// Open implements Operator.
func (t *tee) Open(ctx *Context) error {
	for _, h := range t.heads {
		if err := h.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Process implements Operator.
func (t *tee) Process(b *types.Batch) error {
	if t.filter == nil {
		for k := range t.heads {
			if err := t.pass(k, b, nil, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !t.indexed {
		t.byRule = make([][]int, len(t.sel.Rows))
		for k, r := range t.rules {
			if r < 0 {
				t.plain = append(t.plain, k)
			} else {
				t.byRule[r] = append(t.byRule[r], k)
			}
		}
		t.proj = make([]*teeProjection, len(t.heads))
		t.after = make([]Operator, len(t.heads))
		t.meter = make([]*Meter, len(t.heads))
		for k, r := range t.rules {
			cols, next, m, ok := projects(t.heads[k])
			if r < 0 || !ok {
				continue
			}
			i := slices.IndexFunc(t.projs, func(p *teeProjection) bool { return slices.Equal(p.cols, cols) })
			if i < 0 {
				i = len(t.projs)
				t.projs = append(t.projs, &teeProjection{cols: cols})
			}
			t.proj[k], t.after[k], t.meter[k] = t.projs[i], next, m
		}
		t.indexed = true
	}
	for _, p := range t.projs {
		p.reset(len(b.Rows))
	}
	t.sel.Reset()
	if err := t.filter.Select(b, &t.sel); err != nil {
		return err
	}
	for _, k := range t.plain {
		if err := t.pass(k, b, nil, false); err != nil {
			return err
		}
	}
	for _, r := range t.sel.Touched {
		for _, k := range t.byRule[r] {
			if err := t.pass(k, b, t.sel.Rows[r], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// pass hands head k the batch b, or (filtered) its rows at rows.
func (t *tee) pass(k int, b *types.Batch, rows []int32, filtered bool) error {
	h := t.heads[k]
	shift := t.shifts[k]
	if !filtered && shift == 0 {
		return h.Process(b)
	}
	c := &t.buf // rows only: their values alias b's
	if filtered && t.proj[k] != nil {
		p := t.proj[k]
		for _, i := range rows {
			r := b.Rows[i]
			if r.Origin.Part >= 0 {
				r.Origin.Part += shift
			}
			r.Vals = p.row(b, i)
			c.Rows = append(c.Rows, r)
		}
		h = t.after[k]
		if m := t.meter[k]; m != nil {
			m.count(len(c.Rows))
		}
	} else if filtered {
		for _, i := range rows {
			r := b.Rows[i]
			if r.Origin.Part >= 0 {
				r.Origin.Part += shift
			}
			c.Rows = append(c.Rows, r)
		}
	} else {
		for _, r := range b.Rows {
			if r.Origin.Part >= 0 {
				r.Origin.Part += shift
			}
			c.Rows = append(c.Rows, r)
		}
	}
	err := h.Process(c)
	clear(c.Rows) // hold no values
	c.Rows = c.Rows[:0]
	return err
}

// Watermark implements Operator.
func (t *tee) Watermark(wm int64) error {
	for _, h := range t.heads {
		if err := h.Watermark(wm); err != nil {
			return err
		}
	}
	return nil
}

// Finish implements Operator. Each branch's edge snapshots its branch
// when the end of input reaches it, before passing it on.
func (t *tee) Finish() error {
	for _, h := range t.heads {
		if err := h.Finish(); err != nil {
			return err
		}
	}
	return nil
}

// Close implements Operator: every branch is closed, also after an error.
func (t *tee) Close() error {
	var errs []error
	if t.filter != nil {
		t.filter.Close()
	}
	for _, h := range t.heads {
		errs = append(errs, h.Close())
	}
	return errors.Join(errs...)
}

// SetIdle implements Output.
func (t *tee) SetIdle(idle bool) error {
	for _, e := range t.edges {
		if err := e.SetIdle(idle); err != nil {
			return err
		}
	}
	return nil
}

// Barrier implements BarrierOutput. The task snapshotted every branch's
// operators before.
func (t *tee) Barrier(id int64) error {
	for _, e := range t.edges {
		b, ok := e.(BarrierOutput)
		if !ok {
			return fmt.Errorf("output %T cannot carry checkpoint barriers", e)
		}
		if err := b.Barrier(id); err != nil {
			return err
		}
	}
	return nil
}
