package agg

import (
	"math"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestVariance(t *testing.T) {
	// 2 4 4 4 5 5 7 9: mean 5, squared deviations sum to 32.
	xs := []int64{2, 4, 4, 4, 5, 5, 7, 9}
	want := map[string]float64{
		"VAR_POP":     4,
		"VAR_SAMP":    32.0 / 7,
		"STDDEV_POP":  2,
		"STDDEV_SAMP": math.Sqrt(32.0 / 7),
		"VARIANCE":    32.0 / 7,
		"STDDEV":      math.Sqrt(32.0 / 7),
	}
	for name, w := range want {
		a := newAcc(t, name, false, false, "DOUBLE", types.Int)
		checkResult(t, a, types.Value{})
		for _, x := range xs {
			add(t, a, types.Int32Value(int32(x)))
		}
		add(t, a, types.Value{})
		checkClose(t, name, a.Result(), w)

		// Retracting an added outlier returns to the same value.
		add(t, a, types.Int32Value(1000000))
		retract(t, a, types.Int32Value(1000000))
		checkClose(t, name+" after retract", a.Result(), w)

		// Merging two halves gives the same value.
		l := newAcc(t, name, false, false, "", types.Int)
		r := newAcc(t, name, false, false, "", types.Int)
		for i, x := range xs {
			if i%3 == 0 {
				add(t, l, types.Int32Value(int32(x)))
			} else {
				add(t, r, types.Int32Value(int32(x)))
			}
		}
		if err := l.Merge(r); err != nil {
			t.Fatal(err)
		}
		checkClose(t, name+" merged", l.Result(), w)

		for _, x := range xs {
			retract(t, a, types.Int32Value(int32(x)))
		}
		checkResult(t, a, types.Value{})
	}
}

func TestVarianceSmallGroups(t *testing.T) {
	samp := newAcc(t, "STDDEV_SAMP", false, false, "DOUBLE", types.Decimal(10, 2))
	pop := newAcc(t, "STDDEV_POP", false, false, "DOUBLE", types.Decimal(10, 2))
	add(t, samp, types.DecimalValue(150, 2))
	add(t, pop, types.DecimalValue(150, 2))
	checkResult(t, samp, types.Value{}) // one row: no sample deviation
	checkResult(t, pop, types.DoubleValue(0))

	// Large offset, tiny spread: Welford keeps the precision.
	v := newAcc(t, "VAR_SAMP", false, false, "DOUBLE", types.Double)
	for _, x := range []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16} {
		add(t, v, types.DoubleValue(x))
	}
	checkClose(t, "VAR_SAMP offset", v.Result(), 30)
}

func checkClose(t *testing.T, what string, got types.Value, want float64) {
	t.Helper()
	if got.Kind() != types.KindDouble {
		t.Fatalf("%s: got %s, want DOUBLE %v", what, show(got), want)
	}
	if d := math.Abs(got.Float() - want); d > 1e-12*max(1, math.Abs(want)) {
		t.Fatalf("%s: got %.17g, want %.17g", what, got.Float(), want)
	}
}
