package exec

import (
	"errors"
	"fmt"

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
		t.indexed = true
	}
	t.sel.reset()
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
	if filtered {
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
