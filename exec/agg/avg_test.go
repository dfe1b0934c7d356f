package agg

import (
	"math"
	"math/big"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestAvgInt(t *testing.T) {
	a := newAcc(t, "AVG", false, false, "INT", types.Int)
	checkResult(t, a, types.Value{})
	add(t, a, types.Int32Value(1))
	add(t, a, types.Int32Value(2))
	checkResult(t, a, types.Int32Value(1)) // 3/2: integer division
	add(t, a, types.Value{})
	add(t, a, types.Int32Value(4))
	checkResult(t, a, types.Int32Value(2)) // 7/3
	retract(t, a, types.Int32Value(4))
	retract(t, a, types.Int32Value(2))
	retract(t, a, types.Int32Value(1))
	checkResult(t, a, types.Value{})

	// Truncation toward zero, like Java.
	add(t, a, types.Int32Value(-7))
	add(t, a, types.Int32Value(0))
	checkResult(t, a, types.Int32Value(-3))

	// The sum is a BIGINT: no INT overflow on the way.
	b := newAcc(t, "AVG", false, false, "INT", types.Int)
	add(t, b, types.Int32Value(math.MaxInt32))
	add(t, b, types.Int32Value(math.MaxInt32))
	checkResult(t, b, types.Int32Value(math.MaxInt32))
}

func TestAvgDouble(t *testing.T) {
	a := newAcc(t, "AVG", false, false, "DOUBLE", types.Double)
	add(t, a, types.DoubleValue(1))
	add(t, a, types.DoubleValue(2))
	checkResult(t, a, types.DoubleValue(1.5))
}

func TestAvgDecimal(t *testing.T) {
	a := newAcc(t, "AVG", false, false, "DECIMAL(38, 6)", types.Decimal(10, 2))
	checkResult(t, a, types.Value{})
	add(t, a, types.DecimalValue(100, 2))             // 1.00
	add(t, a, types.DecimalValue(200, 2))             // 2.00
	add(t, a, types.DecimalValue(200, 2))             // 2.00
	checkResult(t, a, types.DecimalValue(1666667, 6)) // 5/3 = 1.666666|67 → half up
	retract(t, a, types.DecimalValue(200, 2))
	checkResult(t, a, types.DecimalValue(1500000, 6))

	neg := newAcc(t, "AVG", false, false, "", types.Decimal(10, 2))
	add(t, neg, types.DecimalValue(-100, 2))
	add(t, neg, types.DecimalValue(-200, 2))
	add(t, neg, types.DecimalValue(-200, 2))
	checkResult(t, neg, types.DecimalValue(-1666667, 6)) // half away from zero

	half := newAcc(t, "AVG", false, false, "DECIMAL(38, 6)", types.Decimal(10, 6))
	add(t, half, types.DecimalValue(1, 6))
	add(t, half, types.DecimalValue(0, 6))
	checkResult(t, half, types.DecimalValue(1, 6)) // 0.0000005 → 0.000001

	wide := newAcc(t, "AVG", false, false, "DECIMAL(38, 8)", types.Decimal(20, 8))
	add(t, wide, types.DecimalValue(math.MaxInt64, 8))
	add(t, wide, types.DecimalValue(math.MaxInt64, 8))
	checkResult(t, wide, types.DecimalValue(math.MaxInt64, 8))
	add(t, wide, types.DecimalValue(1, 8))
	// (2*MaxInt64 + 1) / 3, exact big arithmetic.
	want := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(2))
	want.Add(want, big.NewInt(1))
	want.Quo(want, big.NewInt(3))
	checkResult(t, wide, types.BigDecimalValue(want, 8))
}
