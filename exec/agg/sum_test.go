package agg

import (
	"math"
	"math/big"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestSumInt(t *testing.T) {
	a := newAcc(t, "SUM", false, false, "INT", types.Int)
	checkResult(t, a, types.Value{})
	add(t, a, types.Int32Value(5))
	add(t, a, types.Value{})
	add(t, a, types.Int32Value(-2))
	checkResult(t, a, types.Int32Value(3))
	retract(t, a, types.Int32Value(5))
	retract(t, a, types.Int32Value(-2))
	checkResult(t, a, types.Value{}) // back to no rows: NULL, not 0

	// SUM(INT) wraps like Java's int.
	add(t, a, types.Int32Value(math.MaxInt32))
	add(t, a, types.Int32Value(1))
	checkResult(t, a, types.Int32Value(math.MinInt32))

	b := newAcc(t, "SUM", false, false, "TINYINT", types.TinyInt)
	add(t, b, types.IntValue(types.KindTinyInt, 100))
	add(t, b, types.IntValue(types.KindTinyInt, 100))
	checkResult(t, b, types.IntValue(types.KindTinyInt, -56))
}

func TestSumTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  types.Type
		want string
	}{
		{"SUM", types.SmallInt, "SMALLINT"},
		{"SUM", types.BigInt, "BIGINT"},
		{"SUM", types.Float, "FLOAT"},
		{"SUM", types.Double, "DOUBLE"},
		{"SUM", types.Decimal(10, 2), "DECIMAL(38, 2)"},
		{"SUM0", types.Int, "INT NOT NULL"},
		{"SUM0", types.Decimal(5, 0), "DECIMAL(38, 0) NOT NULL"},
	} {
		rt, err := mustFunc(t, tc.name).ResultType([]types.Type{tc.arg})
		if err != nil {
			t.Fatal(err)
		}
		if rt.String() != tc.want {
			t.Errorf("%s(%s) = %s, want %s", tc.name, tc.arg, rt, tc.want)
		}
	}
	if _, err := mustFunc(t, "SUM").ResultType([]types.Type{types.String}); err == nil {
		t.Error("SUM(STRING) accepted")
	}
	if _, err := mustFunc(t, "SUM").ResultType(nil); err == nil {
		t.Error("SUM() accepted")
	}
}

func TestSumDecimal(t *testing.T) {
	a := newAcc(t, "SUM", false, false, "DECIMAL(38, 2)", types.Decimal(10, 2))
	checkResult(t, a, types.Value{})
	add(t, a, types.DecimalValue(10, 2))         // 0.10
	add(t, a, types.DecimalValue(20, 2))         // 0.20
	add(t, a, types.DecimalValue(-5, 2))         // -0.05
	checkResult(t, a, types.DecimalValue(25, 2)) // exactly 0.25, scale 2

	// Past int64 the sum goes big and stays exact; retraction comes back.
	add(t, a, types.DecimalValue(math.MaxInt64, 2))
	add(t, a, types.DecimalValue(math.MaxInt64, 2))
	want := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(2))
	want.Add(want, big.NewInt(25))
	checkResult(t, a, types.BigDecimalValue(want, 2))
	retract(t, a, types.DecimalValue(math.MaxInt64, 2))
	retract(t, a, types.DecimalValue(math.MaxInt64, 2))
	checkResult(t, a, types.DecimalValue(25, 2))

	// A value of a smaller scale is rescaled.
	add(t, a, types.DecimalValue(1, 0))
	checkResult(t, a, types.DecimalValue(125, 2))

	// Past DECIMAL(38) the result is NULL, as in Flink.
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil)
	b := newAcc(t, "SUM", false, false, "", types.Decimal(38, 0))
	for range 10 {
		add(t, b, types.BigDecimalValue(huge, 0))
	}
	checkResult(t, b, types.Value{})
	retract(t, b, types.BigDecimalValue(huge, 0))
	checkResult(t, b, types.BigDecimalValue(new(big.Int).Mul(huge, big.NewInt(9)), 0))
}

func TestSumDouble(t *testing.T) {
	a := newAcc(t, "SUM", false, false, "DOUBLE", types.Double)
	add(t, a, types.DoubleValue(0.1))
	add(t, a, types.DoubleValue(0.2))
	retract(t, a, types.DoubleValue(0.1))
	retract(t, a, types.DoubleValue(0.2))
	checkResult(t, a, types.Value{})
	add(t, a, types.DoubleValue(1.5))
	checkResult(t, a, types.DoubleValue(1.5))

	f := newAcc(t, "SUM", false, false, "FLOAT", types.Float)
	add(t, f, types.FloatValue(1.25))
	checkResult(t, f, types.FloatValue(1.25))
}

func TestSum0(t *testing.T) {
	a := newAcc(t, "SUM0", false, false, "BIGINT NOT NULL", types.BigInt)
	checkResult(t, a, types.BigIntValue(0))
	add(t, a, types.BigIntValue(4))
	retract(t, a, types.BigIntValue(4))
	checkResult(t, a, types.BigIntValue(0))
	d := newAcc(t, "$sum0", false, false, "DECIMAL(38, 3) NOT NULL", types.Decimal(9, 3))
	checkResult(t, d, types.DecimalValue(0, 3))
}

func TestSumMerge(t *testing.T) {
	a := newAcc(t, "SUM", false, false, "", types.Decimal(10, 2))
	b := newAcc(t, "SUM", false, false, "", types.Decimal(10, 2))
	add(t, a, types.DecimalValue(math.MaxInt64, 2))
	add(t, b, types.DecimalValue(math.MaxInt64, 2))
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	checkResult(t, a, types.BigDecimalValue(new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(2)), 2))
	if err := a.Merge(newAcc(t, "COUNT", false, false, "")); err == nil {
		t.Fatal("SUM merged with COUNT")
	}
}
