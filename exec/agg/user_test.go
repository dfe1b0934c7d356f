package agg_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

// product multiplies BIGINT values, skipping NULLs. It counts zeros apart
// so that retracting a zero is exact.
type product struct {
	p     int64 // product of the non-zero values
	zeros int64
	n     int64
}

func (a *product) Add(args []types.Value) error {
	switch v := args[0]; {
	case v.IsNull():
	case v.Int() == 0:
		a.zeros++
		a.n++
	default:
		a.p *= v.Int()
		a.n++
	}
	return nil
}

func (a *product) Retract(args []types.Value) error {
	switch v := args[0]; {
	case v.IsNull():
	case v.Int() == 0:
		a.zeros--
		a.n--
	case a.p%v.Int() != 0:
		return errors.New("value was never added")
	default:
		a.p /= v.Int()
		a.n--
	}
	return nil
}

func (a *product) Merge(other agg.UserAccumulator) error {
	o := other.(*product)
	a.p *= o.p
	a.zeros += o.zeros
	a.n += o.n
	return nil
}

func (a *product) Result() types.Value {
	switch {
	case a.n == 0:
		return types.Value{}
	case a.zeros > 0:
		return types.BigIntValue(0)
	}
	return types.BigIntValue(a.p)
}

func (a *product) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.p)
	dst = binary.AppendVarint(dst, a.zeros)
	return binary.AppendVarint(dst, a.n)
}

func (a *product) LoadState(src []byte) error {
	for _, f := range []*int64{&a.p, &a.zeros, &a.n} {
		v, k := binary.Varint(src)
		if k <= 0 {
			return errors.New("short state")
		}
		*f, src = v, src[k:]
	}
	return nil
}

// A user-defined aggregate: PRODUCT(BIGINT) registered next to the
// built-ins and used through a Group like any other function.
func ExampleNewUserFunc() {
	f, err := agg.NewUserFunc(agg.UserAggregate{
		Name:   "PRODUCT",
		Args:   []types.Type{types.BigInt},
		Result: types.BigInt,
		New:    func() agg.UserAccumulator { return &product{p: 1} },
	})
	if err != nil {
		panic(err)
	}
	reg := agg.NewRegistry()
	if err := reg.Register(f); err != nil {
		panic(err)
	}

	fn, _ := reg.Lookup("product")
	argTypes := []types.Type{types.BigInt}
	rt, _ := fn.ResultType(argTypes)
	calls := []agg.Call{{Func: fn, Args: []int{0}, ArgTypes: argTypes, Result: rt, Filter: -1}}
	g := agg.NewGroup(calls)
	scratch := make([]types.Value, agg.MaxArgs(calls))
	for _, n := range []int64{2, 3, 7} {
		_ = g.Add(calls, []types.Value{types.BigIntValue(n)}, scratch)
	}
	_ = g.Retract(calls, []types.Value{types.BigIntValue(3)}, scratch)
	out := make([]types.Value, 1)
	g.Results(out)
	fmt.Println(rt, out[0].Int())

	_, err = fn.ResultType([]types.Type{types.String})
	fmt.Println(err)
	// Output:
	// BIGINT 14
	// cannot apply PRODUCT to (STRING): want (BIGINT)
}
