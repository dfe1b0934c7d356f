package agg

import (
	"slices"

	"github.com/sluicesql/sluice/types"
)

// collectFunc is COLLECT(x): the MULTISET of the non-NULL values, in
// arrival order. As in Flink the result is NOT NULL: an empty group yields
// an empty multiset.
type collectFunc struct{}

func (collectFunc) Name() string { return "COLLECT" }

func (collectFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg("COLLECT", args); err != nil {
		return types.Type{}, err
	}
	if args[0].Kind == types.KindNull {
		return types.Type{}, argError("COLLECT", args, "a typed argument")
	}
	elem := args[0].WithoutTimeAttr().WithNullable(false)
	return types.Type{Kind: types.KindMultiset, Elem: &elem, NotNull: true}, nil
}

func (collectFunc) New(args []types.Type, result types.Type) Accumulator {
	return &collectAcc{}
}

type collectAcc struct{ h history }

func (a *collectAcc) Add(args []types.Value) error {
	if !args[0].IsNull() {
		a.h.add(args[0])
	}
	return nil
}

func (a *collectAcc) Retract(args []types.Value) error {
	if !args[0].IsNull() {
		a.h.retract(args[0])
	}
	return nil
}

func (a *collectAcc) Merge(other Accumulator) error {
	o, ok := other.(*collectAcc)
	if !ok {
		return mergeError("COLLECT", other)
	}
	a.h.merge(&o.h)
	return nil
}

// Result copies the values: the multiset must not alias the history.
func (a *collectAcc) Result() types.Value {
	return types.MultisetValue(slices.Clone(a.h.vals))
}

func (a *collectAcc) Clone() Accumulator { return &collectAcc{h: a.h.clone()} }

func (a *collectAcc) Reset() { a.h.reset() }

func (a *collectAcc) AppendState(dst []byte) []byte { return a.h.appendState(dst) }

func (a *collectAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.h.load(&r)
	return r.done("COLLECT")
}
