package agg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// TestRandomRetraction runs random add/retract sequences against every
// retracting accumulator and compares, after each step, its result with a
// fresh accumulator fed only the rows still present (in arrival order, the
// earliest equal row removed by each retraction). LISTAGG(DISTINCT) is left
// out: which occurrence of a repeated value stands for it is unspecified. Along the way it swaps in
// clones and state round trips, and checks Merge against a single
// accumulator.
func TestRandomRetraction(t *testing.T) {
	cases := []struct {
		name     string
		arg      types.Type
		gen      func(r *rand.Rand) types.Value
		distinct bool
	}{
		{"COUNT", types.Int, genInt, false},
		{"COUNT", types.Int, genInt, true},
		{"SUM", types.Int, genInt, false},
		{"SUM", types.Int, genInt, true},
		{"SUM", types.Decimal(10, 2), genDec, false},
		{"SUM0", types.BigInt, genBigInt, false},
		{"SUM", types.Double, genDouble, false},
		{"AVG", types.Int, genInt, false},
		{"AVG", types.Decimal(10, 2), genDec, false},
		{"AVG", types.Double, genDouble, false},
		{"MIN", types.Int, genInt, false},
		{"MAX", types.Decimal(10, 2), genDec, false},
		{"MAX", types.String, genStr, true},
		{"FIRST_VALUE", types.Int, genInt, false},
		{"LAST_VALUE", types.String, genStr, false},
		{"LISTAGG", types.String, genStr, false},
		{"COLLECT", types.Int, genInt, false},
		{"BOOL_AND", types.Boolean, genBool, false},
		{"BOOL_OR", types.Boolean, genBool, false},
		{"VAR_POP", types.Int, genInt, false},
		{"STDDEV_SAMP", types.Double, genDouble, false},
	}
	for _, tc := range cases {
		name := tc.name
		if tc.distinct {
			name += "_DISTINCT"
		}
		t.Run(name+"/"+tc.arg.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			for range 30 {
				runRandom(t, r, tc.name, tc.arg, tc.gen, tc.distinct)
			}
		})
	}
}

func runRandom(t *testing.T, r *rand.Rand, name string, arg types.Type, gen func(*rand.Rand) types.Value, distinct bool) {
	t.Helper()
	acc := newAcc(t, name, false, distinct, "", arg)
	var present []types.Value // the model: rows present, arrival order
	for step := range 60 {
		switch op := r.IntN(10); {
		case op < 6 || len(present) == 0:
			v := gen(r)
			add(t, acc, v)
			present = append(present, v)
		default:
			i := r.IntN(len(present))
			v := present[i]
			retract(t, acc, v)
			j := slices.IndexFunc(present, func(p types.Value) bool { return sameValue(p, v) })
			present = slices.Delete(present, j, j+1)
		}
		switch r.IntN(8) {
		case 0:
			acc = acc.Clone()
		case 1:
			fresh := newAcc(t, name, false, distinct, "", arg)
			if err := fresh.LoadState(acc.AppendState(nil)); err != nil {
				t.Fatal(err)
			}
			acc = fresh
		}
		want := newAcc(t, name, false, distinct, "", arg)
		for _, v := range present {
			add(t, want, v)
		}
		if !closeValue(acc.Result(), want.Result()) {
			t.Fatalf("step %d: %s over %d rows = %s, recomputed %s", step, name, len(present),
				show(acc.Result()), show(want.Result()))
		}
	}
	// Merge: the rows split over two accumulators, the second merged into
	// the first, give the one-accumulator result.
	a := newAcc(t, name, false, distinct, "", arg)
	b := newAcc(t, name, false, distinct, "", arg)
	k := r.IntN(len(present) + 1)
	for _, v := range present[:k] {
		add(t, a, v)
	}
	for _, v := range present[k:] {
		add(t, b, v)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	want := newAcc(t, name, false, distinct, "", arg)
	for _, v := range present {
		add(t, want, v)
	}
	if !closeValue(a.Result(), want.Result()) {
		t.Fatalf("merge: %s, want %s", show(a.Result()), show(want.Result()))
	}
}

// closeValue is sameValue with a tolerance for DOUBLE: retraction leaves
// rounding residue in running sums, and a standard deviation near zero
// magnifies it (sqrt of a residue of 1e-14 is 1e-7).
func closeValue(a, b types.Value) bool {
	if a.Kind() == types.KindDouble && b.Kind() == types.KindDouble {
		return math.Abs(a.Float()-b.Float()) <= 1e-6*max(1, math.Abs(b.Float()))
	}
	if a.Kind() == types.KindMultiset && b.Kind() == types.KindMultiset {
		return slices.EqualFunc(a.Elems(), b.Elems(), sameValue)
	}
	return sameValue(a, b)
}

func nullOr(r *rand.Rand, v types.Value) types.Value {
	if r.IntN(8) == 0 {
		return types.Value{}
	}
	return v
}

func genInt(r *rand.Rand) types.Value    { return nullOr(r, types.Int32Value(int32(r.IntN(9)-4))) }
func genBigInt(r *rand.Rand) types.Value { return nullOr(r, types.BigIntValue(int64(r.IntN(9)))) }
func genDec(r *rand.Rand) types.Value {
	return nullOr(r, types.DecimalValue(int64(r.IntN(2001)-1000), 2))
}
func genDouble(r *rand.Rand) types.Value { return nullOr(r, types.DoubleValue(float64(r.IntN(64))/8)) }
func genStr(r *rand.Rand) types.Value {
	return nullOr(r, types.StringValue(string(rune('a'+r.IntN(5)))))
}
func genBool(r *rand.Rand) types.Value { return nullOr(r, types.BoolValue(r.IntN(2) == 0)) }
