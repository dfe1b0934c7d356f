package agg

import (
	"github.com/sluicesql/sluice/types"
)

// firstLastFunc is FIRST_VALUE or LAST_VALUE: the first or last non-NULL
// value by arrival order. The result has the argument's type, nullable.
//
// The default accumulator keeps the arrival-ordered history so that a
// retraction can reveal the next candidate; the AppendOnly variant keeps one
// value and cannot retract. Merging appends the other accumulator's values
// after this one's, as if they arrived later.
type firstLastFunc struct {
	last       bool
	appendOnly bool
}

func (f firstLastFunc) Name() string {
	if f.last {
		return "LAST_VALUE"
	}
	return "FIRST_VALUE"
}

func (f firstLastFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg(f.Name(), args); err != nil {
		return types.Type{}, err
	}
	if args[0].Kind == types.KindNull {
		return types.Type{}, argError(f.Name(), args, "a typed argument")
	}
	return args[0].WithNullable(true).WithoutTimeAttr(), nil
}

func (f firstLastFunc) New(args []types.Type, result types.Type) Accumulator {
	if f.appendOnly {
		return &firstLastAcc{last: f.last}
	}
	return &firstLastRetractAcc{last: f.last}
}

// AppendOnly implements AppendOnlyFunc.
func (f firstLastFunc) AppendOnly() Func { f.appendOnly = true; return f }

func firstLastName(last bool) string {
	return firstLastFunc{last: last}.Name()
}

// firstLastAcc is append-only FIRST_VALUE/LAST_VALUE.
type firstLastAcc struct {
	v    types.Value
	last bool
}

func (a *firstLastAcc) Add(args []types.Value) error {
	a.fold(args[0])
	return nil
}

func (a *firstLastAcc) fold(v types.Value) {
	if !v.IsNull() && (a.last || a.v.IsNull()) {
		a.v = v
	}
}

func (a *firstLastAcc) Retract(args []types.Value) error {
	if args[0].IsNull() {
		return nil
	}
	return appendOnlyError(firstLastName(a.last))
}

func (a *firstLastAcc) Merge(other Accumulator) error {
	switch o := other.(type) {
	case *firstLastAcc:
		a.fold(o.v)
	case *firstLastRetractAcc:
		a.fold(o.Result())
	default:
		return mergeError(firstLastName(a.last), other)
	}
	return nil
}

func (a *firstLastAcc) Result() types.Value { return a.v }

func (a *firstLastAcc) Clone() Accumulator { c := *a; return &c }

func (a *firstLastAcc) Reset() { a.v = types.Value{} }

func (a *firstLastAcc) AppendState(dst []byte) []byte { return AppendStateValue(dst, a.v) }

func (a *firstLastAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.v = r.value()
	return r.done(firstLastName(a.last))
}

// firstLastRetractAcc is FIRST_VALUE/LAST_VALUE with retraction.
type firstLastRetractAcc struct {
	h    history
	last bool
}

func (a *firstLastRetractAcc) Add(args []types.Value) error {
	if !args[0].IsNull() {
		a.h.add(args[0])
	}
	return nil
}

func (a *firstLastRetractAcc) Retract(args []types.Value) error {
	if !args[0].IsNull() {
		a.h.retract(args[0])
	}
	return nil
}

func (a *firstLastRetractAcc) Merge(other Accumulator) error {
	o, ok := other.(*firstLastRetractAcc)
	if !ok {
		return mergeError(firstLastName(a.last), other)
	}
	a.h.merge(&o.h)
	return nil
}

func (a *firstLastRetractAcc) Result() types.Value {
	if len(a.h.vals) == 0 {
		return types.Value{}
	}
	if a.last {
		return a.h.vals[len(a.h.vals)-1]
	}
	return a.h.vals[0]
}

func (a *firstLastRetractAcc) Clone() Accumulator {
	return &firstLastRetractAcc{h: a.h.clone(), last: a.last}
}

func (a *firstLastRetractAcc) Reset() { a.h.reset() }

func (a *firstLastRetractAcc) AppendState(dst []byte) []byte { return a.h.appendState(dst) }

func (a *firstLastRetractAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.h.load(&r)
	return r.done(firstLastName(a.last))
}
