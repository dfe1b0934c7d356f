package agg

import (
	"encoding/binary"
	"slices"

	"github.com/sluicesql/sluice/types"
)

// minMaxFunc is MIN or MAX over any comparable type (types.Compare's
// order); the result has the argument's type, nullable, NULL for an empty
// group.
//
// The default accumulator keeps a sorted multiset of the values (value and
// count) so that retracting the current extreme reveals the next one. The
// AppendOnly variant keeps only the extreme, allocates nothing, and cannot
// retract.
type minMaxFunc struct {
	max        bool
	appendOnly bool
}

func (f minMaxFunc) Name() string {
	if f.max {
		return "MAX"
	}
	return "MIN"
}

func (f minMaxFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg(f.Name(), args); err != nil {
		return types.Type{}, err
	}
	switch args[0].Kind {
	case types.KindMap, types.KindMultiset, types.KindNull:
		return types.Type{}, argError(f.Name(), args, "a comparable argument")
	}
	return args[0].WithNullable(true).WithoutTimeAttr(), nil
}

func (f minMaxFunc) New(args []types.Type, result types.Type) Accumulator {
	if f.appendOnly {
		return &extremeAcc{max: f.max}
	}
	return &minMaxAcc{max: f.max}
}

// AppendOnly implements AppendOnlyFunc.
func (f minMaxFunc) AppendOnly() Func { f.appendOnly = true; return f }

// extremeAcc is append-only MIN/MAX: the current extreme only.
type extremeAcc struct {
	v   types.Value
	has bool
	max bool
}

func (a *extremeAcc) name() string {
	if a.max {
		return "MAX"
	}
	return "MIN"
}

func (a *extremeAcc) Add(args []types.Value) error {
	a.fold(args[0])
	return nil
}

func (a *extremeAcc) fold(v types.Value) {
	if v.IsNull() {
		return
	}
	if !a.has {
		a.v, a.has = v, true
		return
	}
	c := types.Compare(v, a.v)
	if (a.max && c > 0) || (!a.max && c < 0) {
		a.v = v
	}
}

func (a *extremeAcc) Retract(args []types.Value) error {
	if args[0].IsNull() {
		return nil
	}
	return appendOnlyError(a.name())
}

func (a *extremeAcc) Merge(other Accumulator) error {
	switch o := other.(type) {
	case *extremeAcc:
		if o.has {
			a.fold(o.v)
		}
	case *minMaxAcc:
		if v := o.Result(); !v.IsNull() {
			a.fold(v)
		}
	default:
		return mergeError(a.name(), other)
	}
	return nil
}

func (a *extremeAcc) Result() types.Value { return a.v }

func (a *extremeAcc) Clone() Accumulator { c := *a; return &c }

func (a *extremeAcc) Reset() { a.v, a.has = types.Value{}, false }

func (a *extremeAcc) AppendState(dst []byte) []byte { return AppendStateValue(dst, a.v) }

func (a *extremeAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.v = r.value()
	a.has = !a.v.IsNull()
	return r.done(a.name())
}

// minMaxAcc is MIN/MAX with retraction: a multiset of the values, sorted by
// types.Compare, with their counts. Counts may be negative while a
// retraction waits for its accumulation; such entries do not contribute.
type minMaxAcc struct {
	vals []countedValue
	max  bool
}

type countedValue struct {
	v types.Value
	n int64
}

func (a *minMaxAcc) name() string {
	if a.max {
		return "MAX"
	}
	return "MIN"
}

func (a *minMaxAcc) Add(args []types.Value) error {
	if !args[0].IsNull() {
		a.shift(args[0], 1)
	}
	return nil
}

func (a *minMaxAcc) Retract(args []types.Value) error {
	if !args[0].IsNull() {
		a.shift(args[0], -1)
	}
	return nil
}

func (a *minMaxAcc) shift(v types.Value, delta int64) {
	i, found := slices.BinarySearchFunc(a.vals, v, func(e countedValue, v types.Value) int {
		return types.Compare(e.v, v)
	})
	if !found {
		a.vals = slices.Insert(a.vals, i, countedValue{v: v, n: delta})
		return
	}
	a.vals[i].n += delta
	if a.vals[i].n == 0 {
		a.vals = slices.Delete(a.vals, i, i+1)
	}
}

func (a *minMaxAcc) Merge(other Accumulator) error {
	o, ok := other.(*minMaxAcc)
	if !ok {
		return mergeError(a.name(), other)
	}
	for _, e := range o.vals {
		a.shift(e.v, e.n)
	}
	return nil
}

func (a *minMaxAcc) Result() types.Value {
	if a.max {
		for i := len(a.vals) - 1; i >= 0; i-- {
			if a.vals[i].n > 0 {
				return a.vals[i].v
			}
		}
		return types.Value{}
	}
	for _, e := range a.vals {
		if e.n > 0 {
			return e.v
		}
	}
	return types.Value{}
}

func (a *minMaxAcc) Clone() Accumulator {
	return &minMaxAcc{vals: slices.Clone(a.vals), max: a.max}
}

func (a *minMaxAcc) Reset() {
	clear(a.vals)
	a.vals = a.vals[:0]
}

func (a *minMaxAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(a.vals)))
	for _, e := range a.vals {
		dst = binary.AppendVarint(dst, e.n)
		dst = AppendStateValue(dst, e.v)
	}
	return dst
}

func (a *minMaxAcc) LoadState(src []byte) error {
	a.Reset()
	r := stateReader{src: src}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		c := r.varint()
		a.vals = append(a.vals, countedValue{n: c, v: r.value()})
	}
	return r.done(a.name())
}
