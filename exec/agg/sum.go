package agg

import (
	"encoding/binary"
	"math"

	"github.com/sluicesql/sluice/types"
)

// sumFunc is SUM and SUM0 (Flink's $SUM0: SUM that yields 0 instead of
// NULL for an empty group). Result types follow Flink: an integer or
// approximate type sums in its own type (SUM(INT) is INT and wraps around
// like Java's int), SUM(DECIMAL(p, s)) is DECIMAL(38, s). SUM is nullable
// and NULL while no non-NULL value is folded in; SUM0 is NOT NULL.
type sumFunc struct{ zero bool }

func (f sumFunc) Name() string {
	if f.zero {
		return "SUM0"
	}
	return "SUM"
}

func (f sumFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg(f.Name(), args); err != nil {
		return types.Type{}, err
	}
	t, err := sumType(f.Name(), args)
	if err != nil {
		return types.Type{}, err
	}
	return t.WithNullable(!f.zero), nil
}

// sumType is the type a SUM of args[0] is computed in.
func sumType(name string, args []types.Type) (types.Type, error) {
	a := args[0]
	switch {
	case a.Kind.IsInteger(), a.Kind == types.KindFloat, a.Kind == types.KindDouble:
		return types.Type{Kind: a.Kind}, nil
	case a.Kind == types.KindDecimal:
		return types.Decimal(maxDecimalPrecision, a.Scale), nil
	}
	return types.Type{}, argError(name, args, "a numeric argument")
}

func (f sumFunc) New(args []types.Type, result types.Type) Accumulator {
	switch {
	case result.Kind == types.KindDecimal:
		return &sumDecimalAcc{scale: result.Scale, zero: f.zero}
	case result.Kind == types.KindFloat || result.Kind == types.KindDouble:
		return &sumFloatAcc{kind: result.Kind, zero: f.zero}
	}
	return &sumIntAcc{kind: result.Kind, zero: f.zero}
}

// sumIntAcc sums integers in an int64; the result wraps to the width of the
// result type. n counts the non-NULL values so that retracting every value
// yields NULL again.
type sumIntAcc struct {
	sum  int64
	n    int64
	kind types.Kind
	zero bool
}

func (a *sumIntAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum += v.Int()
		a.n++
	}
	return nil
}

func (a *sumIntAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum -= v.Int()
		a.n--
	}
	return nil
}

func (a *sumIntAcc) Merge(other Accumulator) error {
	o, ok := other.(*sumIntAcc)
	if !ok {
		return mergeError("SUM", other)
	}
	a.sum += o.sum
	a.n += o.n
	return nil
}

func (a *sumIntAcc) Result() types.Value {
	if a.n == 0 && !a.zero {
		return types.Value{}
	}
	return types.IntValue(a.kind, wrapInt(a.kind, a.sum))
}

// wrapInt truncates n to the width of an integer kind, as Java arithmetic
// on byte, short and int does.
func wrapInt(k types.Kind, n int64) int64 {
	switch k {
	case types.KindTinyInt:
		return int64(int8(n))
	case types.KindSmallInt:
		return int64(int16(n))
	case types.KindInt:
		return int64(int32(n))
	}
	return n
}

func (a *sumIntAcc) Clone() Accumulator { c := *a; return &c }

func (a *sumIntAcc) Reset() { a.sum, a.n = 0, 0 }

func (a *sumIntAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return binary.AppendVarint(dst, a.sum)
}

func (a *sumIntAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum = r.varint()
	return r.done("SUM")
}

// sumFloatAcc sums FLOAT and DOUBLE values in a float64.
type sumFloatAcc struct {
	sum  float64
	n    int64
	kind types.Kind
	zero bool
}

func (a *sumFloatAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum += v.Float()
		a.n++
	}
	return nil
}

func (a *sumFloatAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.n--
		if a.n == 0 {
			a.sum = 0 // drop the rounding residue of add-then-subtract
		} else {
			a.sum -= v.Float()
		}
	}
	return nil
}

func (a *sumFloatAcc) Merge(other Accumulator) error {
	o, ok := other.(*sumFloatAcc)
	if !ok {
		return mergeError("SUM", other)
	}
	a.sum += o.sum
	a.n += o.n
	return nil
}

func (a *sumFloatAcc) Result() types.Value {
	if a.n == 0 && !a.zero {
		return types.Value{}
	}
	return floatResult(a.kind, a.sum)
}

func floatResult(k types.Kind, f float64) types.Value {
	if k == types.KindFloat {
		return types.FloatValue(float32(f))
	}
	return types.DoubleValue(f)
}

func (a *sumFloatAcc) Clone() Accumulator { c := *a; return &c }

func (a *sumFloatAcc) Reset() { a.sum, a.n = 0, 0 }

func (a *sumFloatAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.sum))
}

func (a *sumFloatAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum = math.Float64frombits(r.u64())
	return r.done("SUM")
}

// sumDecimalAcc sums DECIMAL values exactly at the result scale; the sum
// stays in an int64 (no allocation) until it overflows.
type sumDecimalAcc struct {
	sum   decSum
	n     int64
	scale int
	zero  bool
}

func (a *sumDecimalAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum.add(v, a.scale, 1)
		a.n++
	}
	return nil
}

func (a *sumDecimalAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum.add(v, a.scale, -1)
		a.n--
	}
	return nil
}

func (a *sumDecimalAcc) Merge(other Accumulator) error {
	o, ok := other.(*sumDecimalAcc)
	if !ok || o.scale != a.scale {
		return mergeError("SUM", other)
	}
	a.sum.addSum(&o.sum)
	a.n += o.n
	return nil
}

func (a *sumDecimalAcc) Result() types.Value {
	if a.n == 0 && !a.zero {
		return types.Value{}
	}
	return a.sum.value(a.scale)
}

func (a *sumDecimalAcc) Clone() Accumulator {
	c := *a
	c.sum = a.sum.clone()
	return &c
}

func (a *sumDecimalAcc) Reset() { a.sum.reset(); a.n = 0 }

func (a *sumDecimalAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return AppendStateValue(dst, a.sum.exact(a.scale))
}

func (a *sumDecimalAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum.set(r.value())
	return r.done("SUM")
}
