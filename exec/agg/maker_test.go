package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// TestMakerLikeNewGroup folds random rows into many groups made by a
// Maker (several slabs of them) and into groups from NewGroup, and
// compares every result: groups from one slab must not share state.
func TestMakerLikeNewGroup(t *testing.T) {
	var calls []Call
	for _, c := range []struct {
		name       string
		arg        types.Type
		appendOnly bool
		filter     int
	}{
		{"COUNT", types.Type{}, false, -1}, {"COUNT", types.Type{}, false, 2},
		{"SUM", types.BigInt, false, -1}, {"SUM", types.Double, false, -1}, {"SUM", types.Decimal(10, 2), false, -1},
		{"AVG", types.BigInt, false, -1}, {"AVG", types.Double, false, 2},
		{"MIN", types.BigInt, true, -1}, {"MAX", types.String, true, -1}, {"MAX", types.BigInt, false, -1},
	} {
		f := mustFunc(t, c.name)
		call := Call{Func: f, Filter: c.filter, AppendOnly: c.appendOnly}
		if c.arg.Kind != types.KindNull {
			call.Args, call.ArgTypes = []int{argColumn(c.arg)}, []types.Type{c.arg}
		}
		rt, err := f.ResultType(call.ArgTypes)
		if err != nil {
			t.Fatal(err)
		}
		call.Result = rt
		calls = append(calls, call)
	}
	m := NewMaker(calls)
	const groups = 3*slabSize + 5
	var made, plain []Group
	for range groups {
		made = append(made, m.New())
		plain = append(plain, NewGroup(calls))
	}
	r := rand.New(rand.NewPCG(5, 6))
	scratch := make([]types.Value, MaxArgs(calls))
	strs := []string{"a", "b", "zz", ""}
	for range 5000 {
		g := r.IntN(groups)
		row := []types.Value{
			types.BigIntValue(r.Int64N(1000) - 500),
			types.DoubleValue(r.Float64()),
			types.BoolValue(r.IntN(2) == 0),
			types.DecimalValue(r.Int64N(100000), 2),
			types.StringValue(strs[r.IntN(len(strs))]),
		}
		if r.IntN(10) == 0 {
			row[r.IntN(len(row))] = types.NullValue
		}
		if err := made[g].Add(calls, row, scratch); err != nil {
			t.Fatal(err)
		}
		if err := plain[g].Add(calls, row, scratch); err != nil {
			t.Fatal(err)
		}
	}
	got, want := make([]types.Value, len(calls)), make([]types.Value, len(calls))
	for g := range groups {
		made[g].Results(got)
		plain[g].Results(want)
		for i := range calls {
			if !sameValue(got[i], want[i]) {
				t.Fatalf("group %d, %s: %s from a Maker, %s from NewGroup", g, calls[i].Func.Name(), show(got[i]), show(want[i]))
			}
		}
	}
}

// argColumn is the column of the test rows holding values of t.
func argColumn(t types.Type) int {
	switch t.Kind {
	case types.KindDouble:
		return 1
	case types.KindDecimal:
		return 3
	case types.KindVarChar:
		return 4
	}
	return 0
}
