package agg

import (
	"encoding/binary"

	"github.com/sluicesql/sluice/types"
)

// boolAggFunc is BOOL_AND (every non-NULL value is TRUE) or BOOL_OR (some
// value is TRUE) over a BOOLEAN; NULL for an empty group. Counting TRUE and
// FALSE values makes retraction exact.
type boolAggFunc struct{ or bool }

func (f boolAggFunc) Name() string {
	if f.or {
		return "BOOL_OR"
	}
	return "BOOL_AND"
}

func (f boolAggFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg(f.Name(), args); err != nil {
		return types.Type{}, err
	}
	if args[0].Kind != types.KindBoolean {
		return types.Type{}, argError(f.Name(), args, "a BOOLEAN argument")
	}
	return types.Boolean, nil
}

func (f boolAggFunc) New(args []types.Type, result types.Type) Accumulator {
	return &boolAggAcc{or: f.or}
}

type boolAggAcc struct {
	nTrue, nFalse int64
	or            bool
}

func (a *boolAggAcc) fold(v types.Value, d int64) {
	switch {
	case v.IsNull():
	case v.Bool():
		a.nTrue += d
	default:
		a.nFalse += d
	}
}

func (a *boolAggAcc) Add(args []types.Value) error { a.fold(args[0], 1); return nil }

func (a *boolAggAcc) Retract(args []types.Value) error { a.fold(args[0], -1); return nil }

func (a *boolAggAcc) Merge(other Accumulator) error {
	o, ok := other.(*boolAggAcc)
	if !ok {
		return mergeError(boolAggFunc{or: a.or}.Name(), other)
	}
	a.nTrue += o.nTrue
	a.nFalse += o.nFalse
	return nil
}

func (a *boolAggAcc) Result() types.Value {
	if a.nTrue <= 0 && a.nFalse <= 0 {
		return types.Value{}
	}
	if a.or {
		return types.BoolValue(a.nTrue > 0)
	}
	return types.BoolValue(a.nFalse <= 0)
}

func (a *boolAggAcc) Clone() Accumulator { c := *a; return &c }

func (a *boolAggAcc) Reset() { a.nTrue, a.nFalse = 0, 0 }

func (a *boolAggAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.nTrue)
	return binary.AppendVarint(dst, a.nFalse)
}

func (a *boolAggAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.nTrue = r.varint()
	a.nFalse = r.varint()
	return r.done(boolAggFunc{or: a.or}.Name())
}
