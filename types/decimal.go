package types

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// MaxDecimalPrecision is the largest precision of a DECIMAL type, as in Flink.
const MaxDecimalPrecision = 38

// minAdjustedScale is the number of fraction digits Flink keeps at least when
// a result type has to be cut back to MaxDecimalPrecision.
const minAdjustedScale = 6

// ErrDivisionByZero is returned by integer and DECIMAL division and modulo by
// zero. Callers wrap it with context.
var ErrDivisionByZero = errors.New("division by zero")

// pow10 holds the powers of ten that fit in an int64.
var pow10 = [19]int64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
}

// decParts returns the unscaled value and scale of an integer or DECIMAL
// value: integers read as DECIMAL with scale 0. big is nil when the unscaled
// value is compact.
func decParts(v Value) (u int64, b *big.Int, scale int) {
	if v.kind == KindDecimal {
		b, _ = v.x.(*big.Int)
		return v.i, b, int(v.scale)
	}
	return v.i, nil, 0
}

func bigOf(u int64, b *big.Int) *big.Int {
	if b != nil {
		return new(big.Int).Set(b)
	}
	return big.NewInt(u)
}

// DecimalOf returns an integer or DECIMAL value as a DECIMAL value; other
// kinds are returned unchanged. Integers get scale 0.
func DecimalOf(v Value) Value {
	if v.kind.IsInteger() {
		return Value{kind: KindDecimal, i: v.i}
	}
	return v
}

// ParseDecimal parses a decimal literal such as "12.30", "-.5", "+1e3" or
// "1.5E-3" and returns a DECIMAL value that keeps the literal's scale
// ("12.30" has scale 2). A negative scale (from an exponent) is normalised
// to 0 by multiplying out: "1.5E3" is 1500 with scale 0. Surrounding
// whitespace is not accepted; callers trim. The scale may not exceed
// MaxDecimalPrecision; the precision is not bounded here (see
// DecimalPrecision and FitDecimal).
func ParseDecimal(s string) (Value, error) {
	u, b, scale, err := parseDecimal(s)
	if err != nil {
		return NullValue, err
	}
	if b != nil {
		return BigDecimalValue(b, scale), nil
	}
	return Value{kind: KindDecimal, i: u, scale: uint8(scale)}, nil
}

func parseDecimal(s string) (u int64, b *big.Int, scale int, err error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	digits, frac := 0, 0
	dot := false
	overflow := false
	var acc uint64
	start := i
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if dot {
				return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: more than one decimal point", s)
			}
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if dot {
			frac++
		}
		if !overflow {
			if acc > (math.MaxUint64-9)/10 {
				overflow = true
			} else {
				acc = acc*10 + uint64(c-'0')
			}
		}
	}
	mantEnd := i
	if digits == 0 {
		return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: no digits", s)
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: missing exponent", s)
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				break
			}
			exp = exp*10 + int(c-'0')
			if exp > 1000 {
				return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: exponent out of range", s)
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: unexpected character %q", s, s[i])
	}
	scale = frac - exp
	if scale > MaxDecimalPrecision {
		return 0, nil, 0, fmt.Errorf("cannot parse %q as DECIMAL: scale %d exceeds %d", s, scale, MaxDecimalPrecision)
	}
	if !overflow && acc <= math.MaxInt64 && scale >= 0 {
		u = int64(acc)
		if neg {
			u = -u
		}
		return u, nil, scale, nil
	}
	// Slow path: collect the digits into a big.Int.
	buf := make([]byte, 0, digits+1)
	if neg {
		buf = append(buf, '-')
	}
	for j := start; j < mantEnd; j++ {
		if s[j] != '.' {
			buf = append(buf, s[j])
		}
	}
	b, _ = new(big.Int).SetString(string(buf), 10)
	if scale < 0 {
		b.Mul(b, pow10Big(-scale))
		scale = 0
	}
	if b.IsInt64() {
		return b.Int64(), nil, scale, nil
	}
	return 0, b, scale, nil
}

// DecimalPrecision returns the number of digits of a DECIMAL value's
// unscaled value, but at least its scale and at least 1: the precision of
// the narrowest DECIMAL type that holds the value (0.05 → 2, 12.30 → 4).
func DecimalPrecision(v Value) int {
	u, b, s := decParts(v)
	var n int
	if b != nil {
		n = len(new(big.Int).Abs(b).String())
	} else {
		n = digits64(u)
	}
	return max(n, s, 1)
}

// digits64 returns the number of decimal digits of |u| (0 has 1 digit).
func digits64(u int64) int {
	if u == math.MinInt64 {
		return 19
	}
	if u < 0 {
		u = -u
	}
	n := 1
	for n < 19 && u >= pow10[n] {
		n++
	}
	return n
}

// fits64 reports whether |u| < 10^p.
func fits64(u int64, p int) bool {
	if p >= 19 {
		return true
	}
	if p < 0 {
		return false
	}
	return u < pow10[p] && u > -pow10[p]
}

func fitsBig(b *big.Int, p int) bool {
	return new(big.Int).Abs(b).Cmp(pow10Big(p)) < 0
}

// Rescale returns DECIMAL v with the given scale, rounding HALF_UP (ties away
// from zero) when digits are dropped. Integer values are read as scale 0.
// The result is not checked against any precision: see FitDecimal.
func Rescale(v Value, scale int) Value {
	u, b, s := decParts(v)
	if b == nil {
		if r, ok := rescale64(u, s, scale); ok {
			return Value{kind: KindDecimal, i: r, scale: uint8(scale)}
		}
	}
	return BigDecimalValue(rescaleBig(bigOf(u, b), s, scale), scale)
}

// rescale64 rescales an int64 unscaled value from scale s to t, HALF_UP; ok
// is false on int64 overflow.
func rescale64(u int64, s, t int) (int64, bool) {
	switch {
	case t == s:
		return u, true
	case t > s:
		d := t - s
		if d > 18 {
			return 0, u == 0
		}
		hi, lo := bits.Mul64(uabs(u), uint64(pow10[d]))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		if u < 0 {
			return -int64(lo), true
		}
		return int64(lo), true
	default:
		d := s - t
		if d > 18 {
			// |u| < 9.3e18, so the result is 0 unless rounding reaches 1.
			if d == 19 && uabs(u) >= 5e18 {
				if u < 0 {
					return -1, true
				}
				return 1, true
			}
			return 0, true
		}
		p := uint64(pow10[d])
		a := uabs(u)
		q, r := a/p, a%p
		if r >= p-r {
			q++
		}
		if u < 0 {
			return -int64(q), true
		}
		return int64(q), true
	}
}

func uabs(u int64) uint64 {
	if u < 0 {
		return uint64(-u) // MinInt64 maps to 1<<63, which is right
	}
	return uint64(u)
}

// rescaleBig rescales b (modified) from scale s to t, HALF_UP.
func rescaleBig(b *big.Int, s, t int) *big.Int {
	switch {
	case t > s:
		return b.Mul(b, pow10Big(t-s))
	case t < s:
		return divRoundHalfUp(b, pow10Big(s-t))
	}
	return b
}

// divRoundHalfUp returns n/d rounded HALF_UP; n is overwritten.
func divRoundHalfUp(n, d *big.Int) *big.Int {
	neg := (n.Sign() < 0) != (d.Sign() < 0)
	n.Abs(n)
	ad := new(big.Int).Abs(d)
	r := new(big.Int)
	n.QuoRem(n, ad, r)
	r.Lsh(r, 1)
	if r.Cmp(ad) >= 0 {
		n.Add(n, big.NewInt(1))
	}
	if neg {
		n.Neg(n)
	}
	return n
}

// FitDecimal rescales v (an integer or DECIMAL) to scale s, HALF_UP, and
// reports whether the result fits DECIMAL(p, s). Flink's CAST and DECIMAL
// arithmetic turn a value that does not fit into NULL.
func FitDecimal(v Value, p, s int) (Value, bool) {
	u, b, vs := decParts(v)
	if b == nil {
		if r, ok := rescale64(u, vs, s); ok {
			if !fits64(r, p) {
				return NullValue, false
			}
			return Value{kind: KindDecimal, i: r, scale: uint8(s)}, true
		}
	}
	r := rescaleBig(bigOf(u, b), vs, s)
	if !fitsBig(r, p) {
		return NullValue, false
	}
	return BigDecimalValue(r, s), true
}

func fitBig(r *big.Int, p, s int) Value {
	if !fitsBig(r, p) {
		return NullValue
	}
	if r.IsInt64() {
		return Value{kind: KindDecimal, i: r.Int64(), scale: uint8(s)}
	}
	return Value{kind: KindDecimal, x: r, scale: uint8(s)}
}

// adjustDecimal cuts a result type back to MaxDecimalPrecision the way Flink
// does (LogicalTypeMerging.adjustPrecisionScale): keep the integer digits and
// at least min(scale, 6) fraction digits.
func adjustDecimal(p, s int) Type {
	if p <= MaxDecimalPrecision {
		return Decimal(p, s)
	}
	intDigits := p - s
	minScale := min(s, minAdjustedScale)
	return Decimal(MaxDecimalPrecision, max(MaxDecimalPrecision-intDigits, minScale))
}

// DecimalTypeOf returns the DECIMAL type an exact numeric type reads as in
// DECIMAL arithmetic: TINYINT → DECIMAL(3, 0), SMALLINT → DECIMAL(5, 0),
// INT → DECIMAL(10, 0), BIGINT → DECIMAL(19, 0); DECIMAL is returned as is.
// ok is false for other kinds.
func DecimalTypeOf(t Type) (Type, bool) {
	var d Type
	switch t.Kind {
	case KindTinyInt:
		d = Decimal(3, 0)
	case KindSmallInt:
		d = Decimal(5, 0)
	case KindInt:
		d = Decimal(10, 0)
	case KindBigInt:
		d = Decimal(19, 0)
	case KindDecimal:
		d = Decimal(t.Precision, t.Scale)
	default:
		return Type{}, false
	}
	d.NotNull = t.NotNull
	return d, true
}

// DecimalAddType returns the result type of DECIMAL(p1, s1) ± DECIMAL(p2, s2):
// DECIMAL(max(p1-s1, p2-s2) + max(s1, s2) + 1, max(s1, s2)), cut back to
// precision 38 as Flink does.
func DecimalAddType(a, b Type) Type {
	s := max(a.Scale, b.Scale)
	p := max(a.Precision-a.Scale, b.Precision-b.Scale) + s + 1
	return adjustDecimal(p, s)
}

// DecimalMulType returns the result type of DECIMAL(p1, s1) * DECIMAL(p2, s2):
// DECIMAL(p1+p2, s1+s2), cut back to precision 38.
func DecimalMulType(a, b Type) Type {
	return adjustDecimal(a.Precision+b.Precision, a.Scale+b.Scale)
}

// DecimalDivType returns the result type of DECIMAL(p1, s1) / DECIMAL(p2, s2)
// by Flink's rule: s = max(6, s1+p2+1), p = p1-s1+s2+s, cut back to 38.
func DecimalDivType(a, b Type) Type {
	s := max(minAdjustedScale, a.Scale+b.Precision+1)
	p := a.Precision - a.Scale + b.Scale + s
	return adjustDecimal(p, s)
}

// DecimalModType returns the result type of MOD(DECIMAL(p1, s1),
// DECIMAL(p2, s2)): DECIMAL(min(p1-s1, p2-s2) + max(s1, s2), max(s1, s2)).
func DecimalModType(a, b Type) Type {
	s := max(a.Scale, b.Scale)
	p := min(a.Precision-a.Scale, b.Precision-b.Scale) + s
	return adjustDecimal(max(p, 1), s)
}

// DecimalAdd returns a + b as DECIMAL(p, s) (the type from DecimalAddType).
// Operands are integers or DECIMALs of any scale. A result that does not fit
// DECIMAL(p, s) is NULL, as in Flink. The error is always nil; it is there
// for symmetry with DecimalDiv.
func DecimalAdd(a, b Value, p, s int) (Value, error) {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if ab == nil && bb == nil && as <= s && bs <= s {
		// Both operands align to the result scale exactly.
		x, ok1 := rescale64(au, as, s)
		y, ok2 := rescale64(bu, bs, s)
		if !ok1 || !ok2 {
			goto slow
		}
		sum := x + y
		// Signed overflow: operands of equal sign, result of the other.
		if (x >= 0) == (y >= 0) && (sum >= 0) != (x >= 0) {
			goto slow
		}
		if !fits64(sum, p) {
			return NullValue, nil
		}
		return Value{kind: KindDecimal, i: sum, scale: uint8(s)}, nil
	}
slow:
	x, y, sc := alignBig(au, ab, as, bu, bb, bs)
	x.Add(x, y)
	return fitBig(rescaleBig(x, sc, s), p, s), nil
}

// DecimalSub returns a - b as DECIMAL(p, s); see DecimalAdd.
func DecimalSub(a, b Value, p, s int) (Value, error) {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if ab == nil && bb == nil && as <= s && bs <= s {
		x, ok1 := rescale64(au, as, s)
		y, ok2 := rescale64(bu, bs, s)
		if !ok1 || !ok2 {
			goto slow
		}
		d := x - y
		if (x >= 0) != (y >= 0) && (d >= 0) != (x >= 0) {
			goto slow
		}
		if !fits64(d, p) {
			return NullValue, nil
		}
		return Value{kind: KindDecimal, i: d, scale: uint8(s)}, nil
	}
slow:
	x, y, sc := alignBig(au, ab, as, bu, bb, bs)
	x.Sub(x, y)
	return fitBig(rescaleBig(x, sc, s), p, s), nil
}

// alignBig returns both operands as big.Ints at their common (larger) scale.
func alignBig(au int64, ab *big.Int, as int, bu int64, bb *big.Int, bs int) (x, y *big.Int, s int) {
	x, y = bigOf(au, ab), bigOf(bu, bb)
	switch {
	case as < bs:
		x.Mul(x, pow10Big(bs-as))
		return x, y, bs
	case bs < as:
		y.Mul(y, pow10Big(as-bs))
	}
	return x, y, as
}

// DecimalMul returns a * b as DECIMAL(p, s) (the type from DecimalMulType),
// rounding HALF_UP when s is less than the exact scale; NULL when the result
// does not fit.
func DecimalMul(a, b Value, p, s int) (Value, error) {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if ab == nil && bb == nil {
		hi, lo := bits.Mul64(uabs(au), uabs(bu))
		if hi == 0 && lo <= math.MaxInt64 {
			prod := int64(lo)
			if (au < 0) != (bu < 0) {
				prod = -prod
			}
			if r, ok := rescale64(prod, as+bs, s); ok {
				if !fits64(r, p) {
					return NullValue, nil
				}
				return Value{kind: KindDecimal, i: r, scale: uint8(s)}, nil
			}
		}
	}
	x := bigOf(au, ab)
	x.Mul(x, bigOf(bu, bb))
	return fitBig(rescaleBig(x, as+bs, s), p, s), nil
}

// DecimalDiv returns a / b as DECIMAL(p, s) (the type from DecimalDivType),
// rounded HALF_UP to scale s; NULL when the result does not fit, and
// ErrDivisionByZero when b is zero.
func DecimalDiv(a, b Value, p, s int) (Value, error) {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if bb == nil && bu == 0 {
		return NullValue, ErrDivisionByZero
	}
	// a/b at scale s is (au * 10^(s+bs)) / (bu * 10^as).
	if ab == nil && bb == nil && s+bs <= 19 && as <= 18 {
		nhi, nlo := bits.Mul64(uabs(au), pow10u(s+bs))
		dhi, d := bits.Mul64(uabs(bu), uint64(pow10[as]))
		if dhi == 0 && nhi < d {
			q, r := bits.Div64(nhi, nlo, d)
			if r >= d-r {
				q++
			}
			if q <= math.MaxInt64 {
				res := int64(q)
				if (au < 0) != (bu < 0) {
					res = -res
				}
				if !fits64(res, p) {
					return NullValue, nil
				}
				return Value{kind: KindDecimal, i: res, scale: uint8(s)}, nil
			}
		}
	}
	n := bigOf(au, ab)
	n.Mul(n, pow10Big(s+bs))
	d := bigOf(bu, bb)
	if d.Sign() == 0 {
		return NullValue, ErrDivisionByZero
	}
	d.Mul(d, pow10Big(as))
	return fitBig(divRoundHalfUp(n, d), p, s), nil
}

func pow10u(n int) uint64 {
	if n <= 18 {
		return uint64(pow10[n])
	}
	return 1e19
}

// DecimalMod returns the remainder of a / b (sign of a, as Java's
// BigDecimal.remainder) as DECIMAL(p, s) (the type from DecimalModType);
// ErrDivisionByZero when b is zero.
func DecimalMod(a, b Value, p, s int) (Value, error) {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if bb == nil && bu == 0 {
		return NullValue, ErrDivisionByZero
	}
	if ab == nil && bb == nil && au != math.MinInt64 && bu != math.MinInt64 {
		sc := max(as, bs)
		x, ok1 := rescale64(au, as, sc)
		y, ok2 := rescale64(bu, bs, sc)
		if ok1 && ok2 {
			if r, ok := rescale64(x%y, sc, s); ok {
				if !fits64(r, p) {
					return NullValue, nil
				}
				return Value{kind: KindDecimal, i: r, scale: uint8(s)}, nil
			}
		}
	}
	x, y, sc := alignBig(au, ab, as, bu, bb, bs)
	if y.Sign() == 0 {
		return NullValue, ErrDivisionByZero
	}
	x.Rem(x, y)
	return fitBig(rescaleBig(x, sc, s), p, s), nil
}

// DecimalNeg returns -v for a DECIMAL value.
func DecimalNeg(v Value) Value {
	u, b, s := decParts(v)
	if b == nil && u != math.MinInt64 {
		return Value{kind: KindDecimal, i: -u, scale: uint8(s)}
	}
	x := bigOf(u, b)
	return BigDecimalValue(x.Neg(x), s)
}

// DecimalSign returns -1, 0 or +1 for a DECIMAL or integer value.
func DecimalSign(v Value) int {
	u, b, _ := decParts(v)
	if b != nil {
		return b.Sign()
	}
	switch {
	case u < 0:
		return -1
	case u > 0:
		return 1
	}
	return 0
}

// DecimalString formats a DECIMAL value with exactly its scale and no
// exponent: "12.30", "-0.05", "7".
func DecimalString(v Value) string { return string(AppendDecimal(nil, v)) }

// AppendDecimal appends DecimalString(v) to dst.
func AppendDecimal(dst []byte, v Value) []byte {
	u, b, s := decParts(v)
	var buf [24]byte
	var digs []byte
	neg := false
	if b != nil {
		digs = b.Append(buf[:0], 10)
	} else {
		digs = strconv.AppendUint(buf[:0], uabs(u), 10)
		neg = u < 0
	}
	if len(digs) > 0 && digs[0] == '-' {
		neg = true
		digs = digs[1:]
	}
	if neg {
		dst = append(dst, '-')
	}
	if s == 0 {
		return append(dst, digs...)
	}
	if len(digs) <= s {
		dst = append(dst, '0', '.')
		for i := len(digs); i < s; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digs...)
	}
	dst = append(dst, digs[:len(digs)-s]...)
	dst = append(dst, '.')
	return append(dst, digs[len(digs)-s:]...)
}

// DecimalFromFloat converts f to DECIMAL(p, s) the way Flink does
// (through Java's BigDecimal.valueOf, i.e. the shortest decimal string
// of f), rounding HALF_UP to scale s. ok is false when f is NaN or infinite
// or the value does not fit.
func DecimalFromFloat(f float64, p, s int) (Value, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NullValue, false
	}
	var buf [32]byte
	str := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	u, b, sc, err := parseDecimalExp(str)
	if err != nil {
		return NullValue, false
	}
	if b != nil {
		return FitDecimal(BigDecimalValue(b, sc), p, s)
	}
	return FitDecimal(Value{kind: KindDecimal, i: u, scale: uint8(sc)}, p, s)
}

// parseDecimalExp parses the 'e' form of strconv, allowing any scale
// (tiny values have large scales; they are rescaled right after).
func parseDecimalExp(str []byte) (int64, *big.Int, int, error) {
	// Split mantissa and exponent.
	e := len(str)
	for i, c := range str {
		if c == 'e' {
			e = i
			break
		}
	}
	exp, err := strconv.Atoi(string(str[e+1:]))
	if err != nil {
		return 0, nil, 0, err
	}
	mant := str[:e]
	neg := false
	if len(mant) > 0 && mant[0] == '-' {
		neg = true
		mant = mant[1:]
	}
	var acc int64
	frac := 0
	dot := false
	for _, c := range mant {
		if c == '.' {
			dot = true
			continue
		}
		acc = acc*10 + int64(c-'0') // at most 17 digits: no overflow
		if dot {
			frac++
		}
	}
	if neg {
		acc = -acc
	}
	scale := frac - exp
	if scale >= 0 {
		if scale > 255-1 {
			return 0, nil, 0, nil // far below any representable scale: 0
		}
		return acc, nil, scale, nil
	}
	b := big.NewInt(acc)
	b.Mul(b, pow10Big(-scale))
	if b.IsInt64() {
		return b.Int64(), nil, 0, nil
	}
	return 0, b, 0, nil
}

// CompareDecimal orders two integer or DECIMAL values by value: -1, 0 or
// +1, whatever their scales. It does not allocate when both unscaled values
// are compact and aligning their scales does not overflow an int64.
func CompareDecimal(a, b Value) int {
	au, ab, as := decParts(a)
	bu, bb, bs := decParts(b)
	if ab == nil && bb == nil {
		sc := max(as, bs)
		x, ok1 := rescale64(au, as, sc)
		y, ok2 := rescale64(bu, bs, sc)
		if ok1 && ok2 {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	x, y, _ := alignBig(au, ab, as, bu, bb, bs)
	return x.Cmp(y)
}

// RoundingMode selects how Round drops digits.
type RoundingMode uint8

// Rounding modes, named as in Java's RoundingMode.
const (
	RoundHalfUp  RoundingMode = iota // to nearest, ties away from zero (SQL ROUND)
	RoundDown                        // toward zero (TRUNCATE)
	RoundFloor                       // toward negative infinity (FLOOR)
	RoundCeiling                     // toward positive infinity (CEIL)
)

// Round returns the integer or DECIMAL value v rounded to n fraction digits
// with the given mode. n may be negative to round to tens, hundreds and so
// on. The result is a DECIMAL with scale max(n, 0); when n is not below
// v's scale, v is only rescaled (no digit is dropped).
func Round(v Value, n int, mode RoundingMode) Value {
	u, b, s := decParts(v)
	if n >= s {
		return Rescale(v, n)
	}
	d := s - n // digits to drop, > 0
	rs := max(n, 0)
	if b == nil && d <= 18 {
		p := pow10[d]
		q, r := u/p, u%p
		switch mode {
		case RoundHalfUp:
			if r >= p-r && r > 0 {
				q++
			} else if r < 0 && -r >= p+r {
				q--
			}
		case RoundFloor:
			if r < 0 {
				q--
			}
		case RoundCeiling:
			if r > 0 {
				q++
			}
		}
		if n >= 0 {
			return Value{kind: KindDecimal, i: q, scale: uint8(rs)}
		}
		if r, ok := rescale64(q, 0, -n); ok {
			return Value{kind: KindDecimal, i: r}
		}
		x := big.NewInt(q)
		return BigDecimalValue(x.Mul(x, pow10Big(-n)), 0)
	}
	x := bigOf(u, b)
	p := pow10Big(d)
	q, r := new(big.Int).QuoRem(x, p, new(big.Int))
	switch mode {
	case RoundHalfUp:
		r2 := new(big.Int).Abs(r)
		r2.Lsh(r2, 1)
		if r2.Cmp(p) >= 0 {
			q.Add(q, big.NewInt(int64(r.Sign())))
		}
	case RoundFloor:
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		}
	case RoundCeiling:
		if r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
	}
	if n < 0 {
		q.Mul(q, pow10Big(-n))
	}
	return BigDecimalValue(q, rs)
}
