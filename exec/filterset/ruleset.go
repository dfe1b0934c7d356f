package filterset

import (
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// Ruleset is the operator of a ruleset (plan.Ruleset): its rules'
// conditions are evaluated together as the filters of a statement set's
// rules are (one Plan: groups, cached results, multi-pattern matching),
// and each row that the match policy accepts goes on with the alert's
// columns appended.
type Ruleset struct {
	// Plan holds the rules' conditions, in priority order; nil: no rule
	// is enabled, and nothing matches.
	Plan    *Plan
	Name    string
	Version int
	// Needed is how many rules must match; First keeps only the first in
	// priority order.
	Needed int
	First  bool
	Rules  []RulesetRule
	// Except, if set, holds for the rows that raise no alert; it is
	// asked only of those that would.
	Except exec.RowPredicate
	Next   exec.Operator

	set    *Set
	sel    exec.Selection
	pairs  []uint64 // row << 32 | rule, of the batch's matches
	out    types.Batch
	name   types.Value
	tagBuf []string
}

// RulesetRule is what an alert says of a rule it matched.
type RulesetRule struct {
	Name     types.Value
	Severity int // its rank in plan.Severities
	Tags     []string
}

// Open implements exec.Operator.
func (r *Ruleset) Open(ctx *exec.Context) error {
	if r.Plan != nil {
		set, err := r.Plan.New(ctx.Metrics)
		if err != nil {
			return err
		}
		r.set = set
	}
	r.sel.Rows = make([][]int32, len(r.Rules))
	r.name = types.StringValue(r.Name)
	return r.Next.Open(ctx)
}

// Process implements exec.Operator.
func (r *Ruleset) Process(b *types.Batch) error {
	if r.set == nil || len(b.Rows) == 0 {
		return nil
	}
	r.sel.Reset()
	if err := r.set.Select(b, &r.sel); err != nil {
		return err
	}
	if len(r.sel.Touched) == 0 {
		return nil
	}
	r.pairs = r.pairs[:0]
	for _, k := range r.sel.Touched {
		for _, i := range r.sel.Rows[k] {
			r.pairs = append(r.pairs, uint64(i)<<32|uint64(k))
		}
	}
	slices.Sort(r.pairs)
	out := &r.out
	out.Truncate()
	for lo := 0; lo < len(r.pairs); {
		i := int(r.pairs[lo] >> 32)
		hi := lo + 1
		for hi < len(r.pairs) && int(r.pairs[hi]>>32) == i {
			hi++
		}
		matched := r.pairs[lo:hi]
		lo = hi
		if len(matched) < r.Needed {
			continue
		}
		in := &b.Rows[i]
		if r.Except != nil {
			skip, err := r.Except(in.Vals)
			if err != nil {
				return filterError(in.Origin, fmt.Errorf("EXCEPT WHEN of ruleset %s: %w", r.Name, err))
			}
			if skip {
				continue
			}
		}
		if r.First {
			matched = matched[:1]
		}
		w := len(in.Vals)
		vals := out.AddRow(in.Kind, in.Origin, w+6)
		copy(vals, in.Vals)
		names := make([]types.Value, len(matched))
		sev := 0
		r.tagBuf = r.tagBuf[:0]
		for j, m := range matched {
			ru := &r.Rules[uint32(m)]
			names[j] = ru.Name
			sev = max(sev, ru.Severity)
			for _, t := range ru.Tags {
				if !slices.Contains(r.tagBuf, t) {
					r.tagBuf = append(r.tagBuf, t)
				}
			}
		}
		tags := make([]types.Value, len(r.tagBuf))
		for j, t := range r.tagBuf {
			tags[j] = types.StringValue(t)
		}
		vals[w] = r.name
		vals[w+1] = types.IntValue(types.KindInt, int64(r.Version))
		vals[w+2] = types.ArrayValue(names)
		vals[w+3] = severities[sev]
		vals[w+4] = types.ArrayValue(tags)
		vals[w+5] = zeroCount
	}
	if len(out.Rows) == 0 {
		return nil
	}
	return r.Next.Process(out)
}

// zeroCount is the suppressed_count of an alert no SUPPRESS BY counted
// for.
var zeroCount = types.IntValue(types.KindBigInt, 0)

// severities are the values of plan.Severities.
var severities = []types.Value{
	types.StringValue("informational"), types.StringValue("low"), types.StringValue("medium"),
	types.StringValue("high"), types.StringValue("critical"),
}

// Watermark implements exec.Operator.
func (r *Ruleset) Watermark(wm int64) error { return r.Next.Watermark(wm) }

// Finish implements exec.Operator.
func (r *Ruleset) Finish() error { return r.Next.Finish() }

// Close implements exec.Operator.
func (r *Ruleset) Close() error {
	if r.set != nil {
		r.set.Close()
	}
	return r.Next.Close()
}
