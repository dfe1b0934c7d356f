package types

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Compare orders two non-NULL values of comparable kinds: -1, 0 or +1.
// Numeric kinds compare by value across kinds (an integer with a DECIMAL or a
// DOUBLE); other kinds compare within their representation. NULL sorts
// before every other value.
func Compare(a, b Value) int {
	if a.kind == KindNull || b.kind == KindNull {
		switch {
		case a.kind == b.kind:
			return 0
		case a.kind == KindNull:
			return -1
		default:
			return 1
		}
	}
	if a.kind == b.kind {
		switch {
		case a.kind.IsInteger(), a.kind == KindBoolean, a.kind == KindDate, a.kind == KindTime,
			a.kind.IsTimestamp(), a.kind == KindIntervalDayTime, a.kind == KindIntervalYearMonth:
			return cmp.Compare(a.i, b.i)
		case a.kind == KindFloat || a.kind == KindDouble:
			return cmp.Compare(a.Float(), b.Float())
		case a.kind == KindDecimal:
			return compareDecimal(a, b)
		case a.kind.IsString() || a.kind.IsBinary():
			return strings.Compare(a.s, b.s)
		case a.kind == KindArray || a.kind == KindRow || a.kind == KindMultiset:
			return slices.CompareFunc(a.Elems(), b.Elems(), Compare)
		}
	}
	ak, bk := a.kind, b.kind
	switch {
	case ak.IsNumeric() && bk.IsNumeric():
		if ak == KindFloat || ak == KindDouble || bk == KindFloat || bk == KindDouble {
			return cmp.Compare(ToFloat(a), ToFloat(b))
		}
		return compareDecimal(a, b) // integers read as scale-0 decimals
	case ak.IsString() && bk.IsString(), ak.IsBinary() && bk.IsBinary():
		return strings.Compare(a.s, b.s)
	case ak.IsTimestamp() && bk.IsTimestamp():
		return cmp.Compare(a.i, b.i)
	}
	// Incomparable kinds: order by kind so that sorting is still total.
	return cmp.Compare(ak, bk)
}

// Equal reports whether two values are equal by Compare; NULL equals NULL
// here (grouping semantics, not SQL's three-valued '=').
func Equal(a, b Value) bool {
	if a.kind == b.kind && a.kind != KindDecimal && a.kind != KindFloat && a.kind != KindDouble &&
		a.x == nil && b.x == nil {
		return a.i == b.i && a.s == b.s
	}
	return Compare(a, b) == 0
}

// ToFloat converts a numeric value to float64.
func ToFloat(v Value) float64 {
	switch {
	case v.kind == KindFloat || v.kind == KindDouble:
		return v.Float()
	case v.kind == KindDecimal:
		if b, ok := v.x.(*big.Int); ok {
			f, _ := new(big.Float).SetInt(b).Float64()
			return f / math.Pow10(int(v.scale))
		}
		return float64(v.i) / math.Pow10(int(v.scale))
	default:
		return float64(v.i)
	}
}

func compareDecimal(a, b Value) int {
	as, bs := 0, 0
	if a.kind == KindDecimal {
		as = int(a.scale)
	}
	if b.kind == KindDecimal {
		bs = int(b.scale)
	}
	if as == bs && a.x == nil && b.x == nil {
		return cmp.Compare(a.i, b.i)
	}
	au, bu := a.BigUnscaled(), b.BigUnscaled()
	if as < bs {
		au.Mul(au, pow10Big(bs-as))
	} else if bs < as {
		bu.Mul(bu, pow10Big(as-bs))
	}
	return au.Cmp(bu)
}

func pow10Big(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
