package agg

import (
	"math/big"

	"github.com/sluicesql/sluice/types"
)

// maxDecimalPrecision is the largest DECIMAL precision, as in Flink.
const maxDecimalPrecision = 38

// decSum is an exact DECIMAL sum at a fixed scale: an int64 while it fits,
// a *big.Int after the first overflow (and back once it fits again).
type decSum struct {
	small int64
	big   *big.Int // non-nil: the sum is big, small is unused
}

// add adds (sign +1) or subtracts (sign -1) v, rescaled to scale.
func (d *decSum) add(v types.Value, scale int, sign int64) {
	if d.big == nil && !v.IsBigDecimal() && v.Scale() == scale {
		u := v.Unscaled()
		if sign < 0 {
			if u == minInt64 {
				d.addBig(v, scale, sign)
				return
			}
			u = -u
		}
		r := d.small + u
		if (d.small >= 0) == (u >= 0) && (r >= 0) != (u >= 0) {
			d.addBig(v, scale, sign)
			return
		}
		d.small = r
		return
	}
	d.addBig(v, scale, sign)
}

const minInt64 = -1 << 63

func (d *decSum) addBig(v types.Value, scale int, sign int64) {
	x := unscaledAt(v, scale)
	if sign < 0 {
		x.Neg(x)
	}
	if d.big == nil {
		d.big = big.NewInt(d.small)
	}
	d.big.Add(d.big, x)
	d.normalize()
}

// addSum adds another sum at the same scale.
func (d *decSum) addSum(o *decSum) {
	if d.big == nil && o.big == nil {
		r := d.small + o.small
		if (d.small >= 0) != (o.small >= 0) || (r >= 0) == (o.small >= 0) {
			d.small = r
			return
		}
	}
	if d.big == nil {
		d.big = big.NewInt(d.small)
	}
	d.big.Add(d.big, o.bigInt())
	d.normalize()
}

func (d *decSum) normalize() {
	if d.big.IsInt64() {
		d.small, d.big = d.big.Int64(), nil
	}
}

func (d *decSum) reset() { d.small, d.big = 0, nil }

func (d *decSum) clone() decSum {
	if d.big == nil {
		return *d
	}
	return decSum{big: new(big.Int).Set(d.big)}
}

// bigInt returns the sum as a new *big.Int.
func (d *decSum) bigInt() *big.Int {
	if d.big != nil {
		return new(big.Int).Set(d.big)
	}
	return big.NewInt(d.small)
}

// value returns the sum as a DECIMAL value of the given scale, or NULL when
// it does not fit DECIMAL(38, scale) (Flink's overflow rule).
func (d *decSum) value(scale int) types.Value {
	if d.big == nil {
		return types.DecimalValue(d.small, scale)
	}
	if !fitsPrecision(d.big, maxDecimalPrecision) {
		return types.Value{}
	}
	return types.BigDecimalValue(d.big, scale)
}

// exact returns the sum as a DECIMAL value of the given scale, whatever
// its precision (for state, where nothing may be lost).
func (d *decSum) exact(scale int) types.Value {
	if d.big == nil {
		return types.DecimalValue(d.small, scale)
	}
	return types.BigDecimalValue(d.big, scale)
}

// set loads the sum from a DECIMAL value.
func (d *decSum) set(v types.Value) {
	if v.IsNull() {
		d.reset()
		return
	}
	if v.IsBigDecimal() {
		d.big = v.BigUnscaled()
		d.normalize()
		return
	}
	d.small, d.big = v.Unscaled(), nil
}

// unscaledAt returns v's unscaled value at the given scale (truncating when
// the scale shrinks, which the type rules never ask for).
func unscaledAt(v types.Value, scale int) *big.Int {
	x := v.BigUnscaled()
	switch s := v.Scale(); {
	case s < scale:
		x.Mul(x, pow10(scale-s))
	case s > scale:
		x.Quo(x, pow10(s-scale))
	}
	return x
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

func fitsPrecision(x *big.Int, p int) bool {
	return new(big.Int).Abs(x).Cmp(pow10(p)) < 0
}

// pow10i64 holds 10^0 .. 10^18.
var pow10i64 = func() [19]int64 {
	var t [19]int64
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// divRoundHalfUp returns num/den rounded half away from zero (Java's
// RoundingMode.HALF_UP, which Flink uses for DECIMAL division).
func divRoundHalfUp(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(den)) >= 0 {
		if (num.Sign() < 0) != (den.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}
