package agg

import (
	"encoding/binary"
	"math"

	"github.com/sluicesql/sluice/types"
)

// varianceFunc is VAR_POP, VAR_SAMP, STDDEV_POP and STDDEV_SAMP (VARIANCE
// and STDDEV are aliases of the sample forms) over a numeric argument.
//
// The result is DOUBLE for every argument type. Flink instead gives these
// functions AVG's result type (STDDEV_POP(INT) is INT, computed with
// integer arithmetic); Sluice deliberately returns DOUBLE, the useful
// answer. The population forms are NULL for an empty group, the sample forms
// also for a group of one row.
//
// The accumulator runs Welford's algorithm (count, mean and sum of squared
// deviations), which stays accurate where sums of squares cancel; Retract
// runs it backwards and Merge combines partial results by Chan's formula.
type varianceFunc struct {
	name   string
	sample bool
	sqrt   bool
}

func (f varianceFunc) Name() string { return f.name }

func (f varianceFunc) ResultType(args []types.Type) (types.Type, error) {
	if err := oneArg(f.name, args); err != nil {
		return types.Type{}, err
	}
	if !args[0].Kind.IsNumeric() {
		return types.Type{}, argError(f.name, args, "a numeric argument")
	}
	return types.Double, nil
}

func (f varianceFunc) New(args []types.Type, result types.Type) Accumulator {
	return &varianceAcc{f: f}
}

type varianceAcc struct {
	n    int64
	mean float64
	m2   float64 // sum of squared deviations from the mean
	f    varianceFunc
}

func (a *varianceAcc) Add(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		x := types.ToFloat(v)
		a.n++
		if a.n == 0 { // a pending retraction cancelled out
			a.mean, a.m2 = 0, 0
			return nil
		}
		d := x - a.mean
		a.mean += d / float64(a.n)
		a.m2 += d * (x - a.mean)
	}
	return nil
}

func (a *varianceAcc) Retract(args []types.Value) error {
	if v := args[0]; !v.IsNull() {
		x := types.ToFloat(v)
		a.n--
		if a.n == 0 {
			a.mean, a.m2 = 0, 0 // exact empty state, no rounding residue
			return nil
		}
		d := x - a.mean
		a.mean -= d / float64(a.n)
		a.m2 -= d * (x - a.mean)
	}
	return nil
}

func (a *varianceAcc) Merge(other Accumulator) error {
	o, ok := other.(*varianceAcc)
	if !ok {
		return mergeError(a.f.name, other)
	}
	n := a.n + o.n
	if n == 0 || o.n == 0 {
		if n == 0 {
			a.n, a.mean, a.m2 = 0, 0, 0
		}
		return nil
	}
	if a.n == 0 {
		a.n, a.mean, a.m2 = o.n, o.mean, o.m2
		return nil
	}
	d := o.mean - a.mean
	na, nb, nn := float64(a.n), float64(o.n), float64(n)
	a.mean += d * nb / nn
	a.m2 += o.m2 + d*d*na*nb/nn
	a.n = n
	return nil
}

func (a *varianceAcc) Result() types.Value {
	div := a.n
	if a.f.sample {
		div--
	}
	if div <= 0 {
		return types.Value{}
	}
	v := max(a.m2, 0) / float64(div) // rounding may leave m2 a hair below 0
	if a.f.sqrt {
		v = math.Sqrt(v)
	}
	return types.DoubleValue(v)
}

func (a *varianceAcc) Clone() Accumulator { c := *a; return &c }

func (a *varianceAcc) Reset() { a.n, a.mean, a.m2 = 0, 0, 0 }

func (a *varianceAcc) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.mean))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.m2))
}

func (a *varianceAcc) LoadState(src []byte) error {
	r := stateReader{src: src}
	a.n = r.varint()
	a.mean = math.Float64frombits(r.u64())
	a.m2 = math.Float64frombits(r.u64())
	return r.done(a.f.name)
}
