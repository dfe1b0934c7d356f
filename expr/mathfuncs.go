package expr

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/sluicesql/sluice/types"
)

func compileAbs(c *compiler, call *Call, args []Eval) (Eval, error) {
	k := call.T.Kind
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		switch {
		case k.IsInteger():
			n := v.Int()
			if n < 0 {
				n = wrapInt(k, -n)
			}
			return types.IntValue(k, n), nil
		case k == types.KindDecimal:
			if types.DecimalSign(v) < 0 {
				return types.DecimalNeg(v), nil
			}
			return v, nil
		case k == types.KindFloat:
			return types.FloatValue(float32(math.Abs(v.Float()))), nil
		}
		return types.DoubleValue(math.Abs(numOf(v))), nil
	}), nil
}

// compileDouble1 builds a DOUBLE function of one numeric argument.
func compileDouble1(f func(float64) float64) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		return strict1(args[0], func(v types.Value) (types.Value, error) {
			return types.DoubleValue(f(numOf(v))), nil
		}), nil
	}
}

// compileDouble2 builds a DOUBLE function of two numeric arguments.
func compileDouble2(f func(a, b float64) float64) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		return strict2(args[0], args[1], func(a, b types.Value) (types.Value, error) {
			return types.DoubleValue(f(numOf(a), numOf(b))), nil
		}), nil
	}
}

func compileLog(c *compiler, call *Call, args []Eval) (Eval, error) {
	if len(args) == 1 {
		return compileDouble1(math.Log)(c, call, args)
	}
	// LOG(base, x)
	return compileDouble2(func(base, x float64) float64 { return math.Log(x) / math.Log(base) })(c, call, args)
}

// roundDigits returns the literal digit count argument of ROUND/TRUNCATE.
func roundDigits(args []Node) (int, bool, error) {
	if len(args) < 2 {
		return 0, true, nil
	}
	l, ok := args[1].(*Literal)
	if !ok {
		return 0, false, nil
	}
	if l.V.IsNull() {
		return 0, true, nil
	}
	n := l.V.Int()
	if n < -38 || n > 38 {
		return 0, false, fmt.Errorf("the number of digits must be between -38 and 38, got %d", n)
	}
	return int(n), true, nil
}

// roundType returns the result type of ROUND and TRUNCATE as Flink's
// findRoundDecimalType: digits may be added by rounding up.
func bindRound(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	sigs := []signature{sig(cNumeric), sig(cNumeric, cInteger)}
	if !sigs[0].match(args) && !sigs[1].match(args) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	t := args[0].Type().WithoutTimeAttr()
	if t.Kind != types.KindDecimal {
		return args, nullableIf(t, args), nil
	}
	n, lit, err := roundDigits(args)
	if err != nil {
		return nil, types.Type{}, fmt.Errorf("cannot apply '%s': %w", name, err)
	}
	if !lit {
		// As Flink's ROUND and TRUNCATE type inference: digits that are
		// not a literal (a column, or -1, which is the negation of the
		// literal 1) keep the number's type: ROUND(42.324, -1) is
		// 40.000.
		return args, nullableIf(t, args), nil
	}
	p, s := t.Precision, t.Scale
	var rt types.Type
	switch {
	case n >= s:
		rt = types.Decimal(p, s)
	case n < 0:
		rt = types.Decimal(min(types.MaxDecimalPrecision, 1+p-s), 0)
	default:
		rt = types.Decimal(min(types.MaxDecimalPrecision, 1+p-s+n), n)
	}
	return args, nullableIf(rt, args), nil
}

// roundFloat rounds a double through its shortest decimal form, as Flink
// does with BigDecimal.valueOf.
func roundFloat(f float64, n int, mode types.RoundingMode) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	d, err := types.ParseDecimal(strconv.FormatFloat(f, 'e', -1, 64))
	if err != nil {
		return f
	}
	r := types.Round(d, n, mode)
	out, _ := strconv.ParseFloat(types.DecimalString(r), 64)
	if out == 0 && math.Signbit(f) {
		return math.Copysign(0, -1)
	}
	return out
}

func compileRound(c *compiler, call *Call, args []Eval) (Eval, error) {
	mode := types.RoundHalfUp
	if call.Name == "TRUNCATE" {
		mode = types.RoundDown
	}
	t := call.T
	k := t.Kind
	digits := func(vs []types.Value) int {
		if len(vs) < 2 {
			return 0
		}
		return int(max(min(vs[1].Int(), 38), -38))
	}
	return strictN(args, func(vs []types.Value) (types.Value, error) {
		v := vs[0]
		n := digits(vs)
		switch {
		case k.IsInteger():
			if n >= 0 {
				return v, nil
			}
			r := types.Round(v, n, mode)
			if r.IsBigDecimal() {
				return types.NullValue, evalErr(call, fmt.Errorf("result out of range"))
			}
			return types.IntValue(k, wrapInt(k, r.Unscaled())), nil
		case k == types.KindDecimal:
			r, ok := types.FitDecimal(types.Round(v, n, mode), t.Precision, t.Scale)
			if !ok {
				return types.NullValue, nil
			}
			return r, nil
		case k == types.KindFloat:
			return types.FloatValue(float32(roundFloat(v.Float(), n, mode))), nil
		}
		return types.DoubleValue(roundFloat(numOf(v), n, mode)), nil
	}), nil
}

func bindFloorCeil(b *Builder, name string, args []Node) ([]Node, types.Type, error) {
	if len(args) == 2 {
		return bindFloorCeilTime(b, name, args)
	}
	sigs := []signature{sig(cNumeric), sig(cDatetime, cLiteral)}
	if len(args) != 1 || !cNumeric.match(args[0]) {
		return nil, types.Type{}, argError(name, args, sigs)
	}
	t := args[0].Type().WithoutTimeAttr()
	if t.Kind == types.KindDecimal {
		p := t.Precision - t.Scale
		if t.Scale > 0 {
			p++
		}
		t = types.Decimal(min(max(p, 1), types.MaxDecimalPrecision), 0)
	}
	return args, nullableIf(t, args), nil
}

func compileFloorCeil(c *compiler, call *Call, args []Eval) (Eval, error) {
	if len(args) == 2 {
		return compileFloorCeilTime(c, call, args)
	}
	floor := call.Name == "FLOOR"
	k := call.T.Kind
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		switch {
		case k.IsInteger():
			return v, nil
		case k == types.KindDecimal:
			mode := types.RoundCeiling
			if floor {
				mode = types.RoundFloor
			}
			return types.Round(v, 0, mode), nil
		}
		f := numOf(v)
		if floor {
			f = math.Floor(f)
		} else {
			f = math.Ceil(f)
		}
		if k == types.KindFloat {
			return types.FloatValue(float32(f)), nil
		}
		return types.DoubleValue(f), nil
	}), nil
}

func compileSign(c *compiler, call *Call, args []Eval) (Eval, error) {
	k := call.T.Kind
	return strict1(args[0], func(v types.Value) (types.Value, error) {
		switch {
		case k.IsInteger():
			n := v.Int()
			switch {
			case n > 0:
				n = 1
			case n < 0:
				n = -1
			}
			return types.IntValue(k, n), nil
		case k == types.KindDecimal:
			return types.Rescale(types.DecimalValue(int64(types.DecimalSign(v)), 0), v.Scale()), nil
		}
		f := numOf(v)
		switch {
		case f > 0:
			f = 1
		case f < 0:
			f = -1
		}
		if k == types.KindFloat {
			return types.FloatValue(float32(f)), nil
		}
		return types.DoubleValue(f), nil
	}), nil
}

// javaRandom is java.util.Random's linear congruential generator, so that
// RAND(seed) and RAND_INTEGER(seed, n) give the same sequences as Flink.
type javaRandom struct{ seed int64 }

const javaMultiplier = 0x5DEECE66D

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaMultiplier) & (1<<48 - 1)}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + 0xB) & (1<<48 - 1)
	return int32(uint64(r.seed) >> (48 - bits))
}

func (r *javaRandom) nextDouble() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) * (1.0 / (1 << 53))
}

func (r *javaRandom) nextInt(bound int32) int32 {
	x := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(x)) >> 31)
	}
	for u := x; ; u = r.next(31) {
		x = u % bound
		if u-x+m >= 0 {
			return x
		}
	}
}

func randomSeed() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]))
}

func compileRand(c *compiler, call *Call, args []Eval) (Eval, error) {
	seedArg, hasSeed := -1, false
	if len(args) == 1 {
		seedArg, hasSeed = 0, true
	}
	var gen *javaRandom
	if !hasSeed {
		gen = newJavaRandom(randomSeed())
	}
	return func(row []types.Value) (types.Value, error) {
		if gen == nil {
			s, err := args[seedArg](row)
			if err != nil {
				return types.NullValue, err
			}
			seed := int64(0)
			if !s.IsNull() {
				seed = s.Int()
			}
			gen = newJavaRandom(seed)
		}
		return types.DoubleValue(gen.nextDouble()), nil
	}, nil
}

func compileRandInteger(c *compiler, call *Call, args []Eval) (Eval, error) {
	bound := args[len(args)-1]
	var gen *javaRandom
	if len(args) == 1 {
		gen = newJavaRandom(randomSeed())
	}
	return func(row []types.Value) (types.Value, error) {
		if gen == nil {
			s, err := args[0](row)
			if err != nil {
				return types.NullValue, err
			}
			seed := int64(0)
			if !s.IsNull() {
				seed = s.Int()
			}
			gen = newJavaRandom(seed)
		}
		b, err := bound(row)
		if err != nil || b.IsNull() {
			return types.NullValue, err
		}
		n := b.Int()
		if n <= 0 || n > math.MaxInt32 {
			return types.NullValue, evalErr(call, fmt.Errorf("bound must be positive, got %d", n))
		}
		return int32Value(int(gen.nextInt(int32(n)))), nil
	}, nil
}

func compileConstDouble(f float64) func(c *compiler, call *Call, args []Eval) (Eval, error) {
	return func(c *compiler, call *Call, args []Eval) (Eval, error) {
		v := types.DoubleValue(f)
		return func([]types.Value) (types.Value, error) { return v, nil }, nil
	}
}
