package agg

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/sluicesql/sluice/types"
)

// avgFunc is AVG. Result types follow Flink (LogicalTypeMerging.findAvgAggType):
// an integer or approximate argument averages in its own type — AVG(INT) is
// INT, computed as the BIGINT sum divided by the count, truncated toward
// zero like Java's integer division — and AVG(DECIMAL(p, s)) is
// DECIMAL(38, max(6, s)), rounded half up. The result is NULL for a group
// with no non-NULL value.
type avgFunc struct{}

func (avgFunc) Name() string { return "AVG" }

func (avgFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg("AVG", args); err != nil {
		return types.Type{}, err
	}
	a := args[0]
	switch {
	case a.Kind.IsInteger(), a.Kind == types.KindFloat, a.Kind == types.KindDouble:
		return types.Type{Kind: a.Kind}, nil
	case a.Kind == types.KindDecimal:
		return types.Decimal(maxDecimalPrecision, max(6, a.Scale)), nil
	}
	return types.Type{}, argError("AVG", args, "a numeric argument")
}

func (avgFunc) New(args []types.Type, result types.Type) Accumulator {
	switch {
	case result.Kind == types.KindDecimal:
		return &avgDecimalAcc{scale: args[0].Scale, resultScale: result.Scale}
	case result.Kind == types.KindFloat || result.Kind == types.KindDouble:
		return &avgFloatAcc{kind: result.Kind}
	}
	return &avgIntAcc{kind: result.Kind}
}

// avgIntAcc averages integers: an int64 sum and a count.
type avgIntAcc struct {
	sum  int64
	n    int64
	kind types.Kind
}

func (a *avgIntAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum += v.Int()
		a.n++
	}
	return nil
}

func (a *avgIntAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum -= v.Int()
		a.n--
	}
	return nil
}

func (a *avgIntAcc) Merge(other Accumulator) error {
	o, ok := other.(*avgIntAcc)
	if !ok {
		return mergeError("AVG", other)
	}
	a.sum += o.sum
	a.n += o.n
	return nil
}

func (a *avgIntAcc) Result() types.Value {
	if a.n <= 0 {
		return types.Value{}
	}
	return types.IntValue(a.kind, wrapInt(a.kind, a.sum/a.n))
}

func (a *avgIntAcc) Clone() Accumulator { c := *a; return &c }

func (a *avgIntAcc) Reset() { a.sum, a.n = 0, 0 }

func (a *avgIntAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return binary.AppendVarint(dst, a.sum)
}

func (a *avgIntAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum = r.varint()
	return r.done("AVG")
}

// avgFloatAcc averages FLOAT and DOUBLE values in float64.
type avgFloatAcc struct {
	sum  float64
	n    int64
	kind types.Kind
}

func (a *avgFloatAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum += v.Float()
		a.n++
	}
	return nil
}

func (a *avgFloatAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.n--
		if a.n == 0 {
			a.sum = 0
		} else {
			a.sum -= v.Float()
		}
	}
	return nil
}

func (a *avgFloatAcc) Merge(other Accumulator) error {
	o, ok := other.(*avgFloatAcc)
	if !ok {
		return mergeError("AVG", other)
	}
	a.sum += o.sum
	a.n += o.n
	return nil
}

func (a *avgFloatAcc) Result() types.Value {
	if a.n <= 0 {
		return types.Value{}
	}
	return floatResult(a.kind, a.sum/float64(a.n))
}

func (a *avgFloatAcc) Clone() Accumulator { c := *a; return &c }

func (a *avgFloatAcc) Reset() { a.sum, a.n = 0, 0 }

func (a *avgFloatAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.sum))
}

func (a *avgFloatAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum = math.Float64frombits(r.u64())
	return r.done("AVG")
}

// avgDecimalAcc averages DECIMAL values: an exact sum at the argument's
// scale and a count; Result divides, rounding half up to the result scale.
type avgDecimalAcc struct {
	sum         decSum
	n           int64
	scale       int
	resultScale int
}

func (a *avgDecimalAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum.add(v, a.scale, 1)
		a.n++
	}
	return nil
}

func (a *avgDecimalAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		a.sum.add(v, a.scale, -1)
		a.n--
	}
	return nil
}

func (a *avgDecimalAcc) Merge(other Accumulator) error {
	o, ok := other.(*avgDecimalAcc)
	if !ok || o.scale != a.scale {
		return mergeError("AVG", other)
	}
	a.sum.addSum(&o.sum)
	a.n += o.n
	return nil
}

func (a *avgDecimalAcc) Result() types.Value {
	if a.n <= 0 {
		return types.Value{}
	}
	shift := a.resultScale - a.scale // 0..6 by the type rule
	if a.sum.big == nil && shift < len(pow10i64) {
		mul := pow10i64[shift]
		if s := a.sum.small; s > math.MinInt64/mul && s < math.MaxInt64/mul {
			num := s * mul
			q, r := num/a.n, num%a.n
			if r < 0 {
				r = -r
			}
			if r >= a.n-r { // |r| >= n/2: round half away from zero
				if num < 0 {
					q--
				} else {
					q++
				}
			}
			return types.DecimalValue(q, a.resultScale)
		}
	}
	num := a.sum.bigInt()
	num.Mul(num, pow10(shift))
	q := divRoundHalfUp(num, big.NewInt(a.n))
	if !fitsPrecision(q, maxDecimalPrecision) {
		return types.Value{}
	}
	return types.BigDecimalValue(q, a.resultScale)
}

func (a *avgDecimalAcc) Clone() Accumulator {
	c := *a
	c.sum = a.sum.clone()
	return &c
}

func (a *avgDecimalAcc) Reset() { a.sum.reset(); a.n = 0 }

func (a *avgDecimalAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	return AppendStateValue(dst, a.sum.exact(a.scale))
}

func (a *avgDecimalAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.sum.set(r.value())
	return r.done("AVG")
}
