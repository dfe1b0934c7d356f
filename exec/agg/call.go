package agg

import (
	"fmt"
	"slices"

	"github.com/sluicesql/sluice/types"
)

// Call is one aggregate call of a query: the function, where its arguments
// are in the input row, an optional FILTER (WHERE ...) column and DISTINCT.
type Call struct {
	Func     Func
	Args     []int // input column indexes; empty for COUNT(*)
	ArgTypes []types.Type
	Result   types.Type
	// Filter is the input column holding the FILTER condition as a
	// BOOLEAN; the row is folded in only when it is TRUE. -1 for none.
	Filter   int
	Distinct bool
	// AppendOnly declares that the input never retracts (no -U/-D rows),
	// so functions that would otherwise keep history to support Retract
	// (MIN, MAX, FIRST_VALUE, LAST_VALUE, LISTAGG) may use a cheaper
	// accumulator whose Retract fails. The planner knows it; the zero value
	// is the safe choice.
	AppendOnly bool
}

// Group is the accumulators of one group (one key, window or slice), one per
// call, in call order.
type Group []Accumulator

// NewGroup returns empty accumulators for calls.
func NewGroup(calls []Call) Group {
	g := make(Group, len(calls))
	for i := range calls {
		g[i] = newAccumulator(&calls[i])
	}
	return g
}

func newAccumulator(c *Call) Accumulator {
	f := c.Func
	if a, ok := f.(AppendOnlyFunc); ok && c.AppendOnly {
		f = a.AppendOnly()
	}
	if c.Distinct {
		return newDistinct(f, c.ArgTypes, c.Result)
	}
	return f.New(c.ArgTypes, c.Result)
}

// AppendOnlyFunc is implemented by functions that have a cheaper variant for
// inputs that never retract. AppendOnly returns that variant: a Func with the
// same name and type rules whose accumulators keep no history and return an
// error from Retract. NewGroup uses it for calls with Call.AppendOnly set.
type AppendOnlyFunc interface {
	Func
	AppendOnly() Func
}

// Add folds row into every accumulator of the group. scratch is a buffer of
// at least the largest argument count, reused to pass arguments without
// allocating.
func (g Group) Add(calls []Call, row []types.Value, scratch []types.Value) error {
	return g.apply(calls, row, scratch, false)
}

// Retract removes row from every accumulator of the group.
func (g Group) Retract(calls []Call, row []types.Value, scratch []types.Value) error {
	return g.apply(calls, row, scratch, true)
}

func (g Group) apply(calls []Call, row []types.Value, scratch []types.Value, retract bool) error {
	for i := range calls {
		c := &calls[i]
		if c.Filter >= 0 {
			f := row[c.Filter]
			if f.IsNull() || !f.Bool() {
				continue
			}
		}
		args := scratch[:len(c.Args)]
		for j, col := range c.Args {
			args[j] = row[col]
		}
		var err error
		if retract {
			err = g[i].Retract(args)
		} else {
			err = g[i].Add(args)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Merge folds other (built for the same calls) into g.
func (g Group) Merge(other Group) error {
	for i := range g {
		if err := g[i].Merge(other[i]); err != nil {
			return err
		}
	}
	return nil
}

// Clone returns an independent copy of g.
func (g Group) Clone() Group {
	out := make(Group, len(g))
	for i, a := range g {
		out[i] = a.Clone()
	}
	return out
}

// Results writes the current result of each accumulator into dst[i].
// Only an accumulator whose result can fail (FallibleResult) returns an
// error.
func (g Group) Results(dst []types.Value) error {
	for i, a := range g {
		if f, ok := a.(FallibleResult); ok {
			v, err := f.ResultErr()
			if err != nil {
				return err
			}
			dst[i] = v
			continue
		}
		dst[i] = a.Result()
	}
	return nil
}

// FallibleResult is implemented by accumulators whose result is computed
// by code that can fail (a WebAssembly function that traps). Operators
// get results through Group.Results, which calls ResultErr; Result then
// returns NULL on a failure.
type FallibleResult interface {
	ResultErr() (types.Value, error)
}

// Instantiator is implemented by functions that hold state which one
// operator instance at a time may use (a WebAssembly instance):
// Instantiate returns a copy of the function with state of its own.
// Operators call it through Bind when they are built, once per parallel
// instance.
type Instantiator interface {
	Func
	Instantiate() (Func, error)
}

// Bind returns calls with every function that is an Instantiator replaced
// by an instance of its own; calls without one are returned as they are.
func Bind(calls []Call) ([]Call, error) {
	var out []Call
	for i, c := range calls {
		in, ok := c.Func.(Instantiator)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(calls)
		}
		f, err := in.Instantiate()
		if err != nil {
			return nil, fmt.Errorf("cannot prepare %s: %w", c.Func.Name(), err)
		}
		out[i].Func = f
	}
	if out == nil {
		return calls, nil
	}
	return out, nil
}

// MaxArgs returns the largest argument count of calls: the size of the
// scratch buffer Add and Retract need.
func MaxArgs(calls []Call) int {
	n := 0
	for _, c := range calls {
		n = max(n, len(c.Args))
	}
	return n
}
