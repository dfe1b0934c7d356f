package wasmudf

import (
	"fmt"
	"sync"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/types"
	"github.com/tetratelabs/wazero/api"
)

// put lays out a call's parameters in in.stack: the byte strings pre
// (accumulators) as (ptr, len) pairs, then the NULL mask if the function
// is called on NULL input, then the arguments. Byte strings are copied
// into the host's block of guest memory, one after the other. Without
// withArgs only pre is laid out (get_value, merge).
func (in *instance) put(pre [][]byte, args []types.Value, withArgs bool) error {
	f := in.f
	need := 0
	for _, b := range pre {
		need += len(b)
	}
	for i, s := range f.args {
		if withArgs && s == slotBytes && !args[i].IsNull() {
			need += len(args[i].Str())
		}
	}
	if need > 1<<31 {
		return fmt.Errorf("the arguments of %s take %d bytes, more than a module can hold", f.spec.Name, need)
	}
	off := uint32(0)
	if need > 0 || len(pre) > 0 {
		p, err := in.reserve(uint32(need))
		if err != nil {
			return err
		}
		off = p
	}
	k := 0
	for _, b := range pre {
		in.mem.Write(off, b)
		in.stack[k], in.stack[k+1] = uint64(off), uint64(len(b))
		off += uint32(len(b))
		k += 2
	}
	if !withArgs {
		return nil
	}
	if f.spec.CalledOnNull {
		mask := uint64(0)
		for i, a := range args {
			if a.IsNull() && i < 32 {
				mask |= 1 << i
			}
		}
		in.stack[k] = mask
		k++
	}
	for i, s := range f.args {
		a := args[i]
		if s == slotBytes {
			if a.IsNull() {
				in.stack[k], in.stack[k+1] = uint64(off), 0
			} else {
				str := a.Str()
				in.mem.WriteString(off, str)
				in.stack[k], in.stack[k+1] = uint64(off), uint64(len(str))
				off += uint32(len(str))
			}
			k += 2
			continue
		}
		if a.IsNull() {
			in.stack[k] = 0
		} else {
			w, err := encode(a, f.spec.Params[i], s)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			in.stack[k] = w
		}
		k++
	}
	return nil
}

// value turns a result word into a value of type t.
func (in *instance) value(w uint64, t types.Type, s slot, what string) (types.Value, error) {
	if in.st.null {
		return types.NullValue, nil
	}
	if s == slotBytes {
		b, err := in.readPacked(w, what)
		if err != nil {
			return types.NullValue, err
		}
		return bytesValue(b, t), nil
	}
	v, err := decode(w, t)
	if err != nil {
		return types.NullValue, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

func (f *Function) what(suffix string) string { return "export '" + f.spec.Export + suffix + "'" }

// ScalarFunction returns f as a scalar function to register. Each
// compiled call of it gets an instance of its own.
func (f *Function) ScalarFunction() expr.ScalarFunction {
	return expr.ScalarFunction{
		Name:        f.spec.Name,
		Args:        f.spec.Params,
		Result:      f.spec.Result,
		CallOnNull:  f.spec.CalledOnNull,
		Instantiate: f.newScalar,
	}
}

func (f *Function) newScalar() (func(args []types.Value) (types.Value, error), error) {
	in, err := f.instantiate()
	if err != nil {
		return nil, err
	}
	fn := in.mod.ExportedFunction(f.spec.Export)
	what := f.what("")
	return func(args []types.Value) (types.Value, error) {
		if err := in.put(nil, args, true); err != nil {
			return types.NullValue, err
		}
		if err := in.call(fn, what); err != nil {
			return types.NullValue, err
		}
		return in.value(in.stack[0], f.spec.Result, f.result, what)
	}, nil
}

// TableFunction returns f as a table function to register.
func (f *Function) TableFunction() expr.TableFunction {
	return expr.TableFunction{
		Name:        f.spec.Name,
		Args:        f.spec.Params,
		Result:      f.spec.Table,
		Instantiate: f.newTable,
	}
}

func (f *Function) newTable() (func(args []types.Value, emit func(row []types.Value) error) error, error) {
	in, err := f.instantiate()
	if err != nil {
		return nil, err
	}
	fn := in.mod.ExportedFunction(f.spec.Export)
	what := f.what("")
	return func(args []types.Value, emit func(row []types.Value) error) error {
		if !f.spec.CalledOnNull {
			for _, a := range args {
				if a.IsNull() {
					return nil
				}
			}
		}
		if err := in.put(nil, args, true); err != nil {
			return err
		}
		clear(in.st.row)
		in.st.emit = emit
		err := in.call(fn, what)
		in.st.emit = nil
		return err
	}, nil
}

// AggregateFunction returns f as an aggregate function to register.
func (f *Function) AggregateFunction() agg.Func { return &aggFunc{f: f} }

// aggFunc is a WebAssembly aggregate. Operators bind it (agg.Bind) to an
// instance of their own; an unbound one shares one instance under a lock.
type aggFunc struct {
	f *Function

	mu     sync.Mutex
	shared *aggInstance
}

// aggInstance is an instance with an aggregate's exports.
type aggInstance struct {
	in                                      *instance
	mu                                      *sync.Mutex // nil when one operator owns it
	create, accumulate, retract, merge, get api.Function
	empty                                   []byte // what create returned
	err                                     error  // set by a failed Result
}

func (a *aggFunc) Name() string               { return a.f.spec.Name }
func (a *aggFunc) DeclaredArgs() []types.Type { return a.f.spec.Params }

func (a *aggFunc) ResultType(args []types.Type) (types.Type, error) {
	if len(args) != len(a.f.spec.Params) {
		return types.Type{}, fmt.Errorf("cannot apply '%s' to %d arguments: it takes %d", a.f.spec.Name, len(args), len(a.f.spec.Params))
	}
	for i, t := range args {
		if t.Kind != types.KindNull && !types.Assignable(t, a.f.spec.Params[i]) {
			return types.Type{}, fmt.Errorf("cannot apply '%s': argument %d is %s, expected %s", a.f.spec.Name, i+1, t, a.f.spec.Params[i])
		}
	}
	return a.f.spec.Result, nil
}

// Instantiate implements agg.Instantiator: a copy of the function with an
// instance of its own, for one operator.
func (a *aggFunc) Instantiate() (agg.Func, error) {
	ai, err := a.f.newAggInstance()
	if err != nil {
		return nil, err
	}
	return &boundAgg{a: a, ai: ai}, nil
}

func (a *aggFunc) New(args []types.Type, result types.Type) agg.Accumulator {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shared == nil {
		ai, err := a.f.newAggInstance()
		if err != nil {
			return &aggAcc{fn: a, err: err}
		}
		ai.mu = &a.mu
		a.shared = ai
	}
	return &aggAcc{fn: a, ai: a.shared, state: append([]byte(nil), a.shared.empty...)}
}

// boundAgg is an aggregate bound to an instance of its own.
type boundAgg struct {
	a  *aggFunc
	ai *aggInstance
}

func (b *boundAgg) Name() string                                     { return b.a.Name() }
func (b *boundAgg) DeclaredArgs() []types.Type                       { return b.a.DeclaredArgs() }
func (b *boundAgg) ResultType(args []types.Type) (types.Type, error) { return b.a.ResultType(args) }
func (b *boundAgg) New(args []types.Type, result types.Type) agg.Accumulator {
	return &aggAcc{fn: b.a, ai: b.ai, state: append([]byte(nil), b.ai.empty...)}
}

func (f *Function) newAggInstance() (*aggInstance, error) {
	in, err := f.instantiate()
	if err != nil {
		return nil, err
	}
	x := f.spec.Export
	ai := &aggInstance{in: in,
		create:     in.mod.ExportedFunction(x + aggCreate),
		accumulate: in.mod.ExportedFunction(x + aggAccumulate),
		get:        in.mod.ExportedFunction(x + aggGetValue),
	}
	if f.retract {
		ai.retract = in.mod.ExportedFunction(x + aggRetract)
	}
	if f.merge {
		ai.merge = in.mod.ExportedFunction(x + aggMerge)
	}
	if err := in.call(ai.create, f.what(aggCreate)); err != nil {
		return nil, err
	}
	b, err := in.readPacked(in.stack[0], f.what(aggCreate))
	if err != nil {
		return nil, err
	}
	ai.empty = append([]byte(nil), b...)
	return ai, nil
}

// aggAcc is one group's accumulator: the bytes the module's functions
// pass from call to call, held by the host, so that state, checkpoints,
// cloning and merging need nothing from the module but its functions.
type aggAcc struct {
	fn    *aggFunc
	ai    *aggInstance
	state []byte
	err   error // the instance could not be made
}

// update runs accumulate or retract (fn) over args.
func (a *aggAcc) update(fn api.Function, suffix string, args []types.Value) error {
	if a.err != nil {
		return a.err
	}
	f := a.fn.f
	if !f.spec.CalledOnNull {
		for _, v := range args {
			if v.IsNull() {
				return nil // SQL aggregates skip rows with a NULL argument
			}
		}
	}
	ai := a.ai
	if ai.mu != nil {
		ai.mu.Lock()
		defer ai.mu.Unlock()
	}
	if ai.err != nil {
		return ai.err
	}
	in := ai.in
	if err := in.put([][]byte{a.state}, args, true); err != nil {
		return err
	}
	return a.take(fn, suffix)
}

// take calls fn, whose parameters are in place, and keeps the
// accumulator it returns.
func (a *aggAcc) take(fn api.Function, suffix string) error {
	in := a.ai.in
	what := a.fn.f.what(suffix)
	if err := in.call(fn, what); err != nil {
		return err
	}
	b, err := in.readPacked(in.stack[0], what)
	if err != nil {
		return err
	}
	a.state = append(a.state[:0], b...)
	return nil
}

func (a *aggAcc) Add(args []types.Value) error {
	return a.update(a.ai.accumulate, aggAccumulate, args)
}

func (a *aggAcc) Retract(args []types.Value) error {
	if a.err == nil && a.ai.retract == nil {
		f := a.fn.f
		return fmt.Errorf("cannot retract from %s: its module exports no '%s%s', which an updating input needs", f.spec.Name, f.spec.Export, aggRetract)
	}
	return a.update(a.ai.retract, aggRetract, args)
}

func (a *aggAcc) Merge(other agg.Accumulator) error {
	o, ok := other.(*aggAcc)
	f := a.fn.f
	if !ok || o.fn != a.fn {
		return fmt.Errorf("cannot merge %s with %T", f.spec.Name, other)
	}
	if a.err != nil {
		return a.err
	}
	if a.ai.merge == nil {
		return fmt.Errorf("cannot merge two accumulators of %s: its module exports no '%s%s', which session windows and hopping and cumulating slices need", f.spec.Name, f.spec.Export, aggMerge)
	}
	ai := a.ai
	if ai.mu != nil {
		ai.mu.Lock()
		defer ai.mu.Unlock()
	}
	if err := ai.in.put([][]byte{a.state, o.state}, nil, false); err != nil {
		return err
	}
	return a.take(ai.merge, aggMerge)
}

// Result returns the value; a failure is kept and returned by ResultErr
// (which the operators call) and by the next update.
func (a *aggAcc) Result() types.Value {
	v, _ := a.ResultErr()
	return v
}

// ResultErr implements agg.FallibleResult.
func (a *aggAcc) ResultErr() (types.Value, error) {
	if a.err != nil {
		return types.NullValue, a.err
	}
	f := a.fn.f
	ai := a.ai
	if ai.mu != nil {
		ai.mu.Lock()
		defer ai.mu.Unlock()
	}
	in := ai.in
	what := f.what(aggGetValue)
	err := in.put([][]byte{a.state}, nil, false)
	if err == nil {
		err = in.call(ai.get, what)
	}
	var v types.Value
	if err == nil {
		v, err = in.value(in.stack[0], f.spec.Result, f.result, what)
	}
	if err != nil {
		if ai.err == nil {
			ai.err = err
		}
		return types.NullValue, err
	}
	return v, nil
}

func (a *aggAcc) Clone() agg.Accumulator {
	c := *a
	c.state = append([]byte(nil), a.state...)
	return &c
}

func (a *aggAcc) Reset() {
	if a.ai != nil {
		a.state = append(a.state[:0], a.ai.empty...)
	}
}

func (a *aggAcc) AppendState(dst []byte) []byte { return append(dst, a.state...) }

func (a *aggAcc) LoadState(src []byte) error {
	if a.err != nil {
		return a.err
	}
	a.state = append(a.state[:0], src...)
	return nil
}

var _ agg.Instantiator = (*aggFunc)(nil)
