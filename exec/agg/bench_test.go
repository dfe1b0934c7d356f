package agg

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

// BenchmarkAdd measures Add per row; the hot functions must report 0
// allocs/op.
func BenchmarkAdd(b *testing.B) {
	for _, bc := range []struct {
		name       string
		fn         string
		arg        types.Type
		appendOnly bool
		val        func(i int) types.Value
	}{
		{"COUNT(*)", "COUNT", types.Type{}, false, nil},
		{"COUNT(x)", "COUNT", types.BigInt, false, func(i int) types.Value { return types.BigIntValue(int64(i)) }},
		{"SUM(BIGINT)", "SUM", types.BigInt, false, func(i int) types.Value { return types.BigIntValue(int64(i)) }},
		{"SUM(DECIMAL)", "SUM", types.Decimal(10, 2), false, func(i int) types.Value { return types.DecimalValue(int64(i%10000), 2) }},
		{"SUM(DOUBLE)", "SUM", types.Double, false, func(i int) types.Value { return types.DoubleValue(float64(i)) }},
		{"AVG(INT)", "AVG", types.Int, false, func(i int) types.Value { return types.Int32Value(int32(i)) }},
		{"AVG(DECIMAL)", "AVG", types.Decimal(10, 2), false, func(i int) types.Value { return types.DecimalValue(int64(i%10000), 2) }},
		{"MIN(BIGINT)/append-only", "MIN", types.BigInt, true, func(i int) types.Value { return types.BigIntValue(int64(-i)) }},
		{"MAX(STRING)/append-only", "MAX", types.String, true, func(i int) types.Value { return types.StringValue(strs[i%len(strs)]) }},
		{"MAX(BIGINT)/retract", "MAX", types.BigInt, false, func(i int) types.Value { return types.BigIntValue(int64(i % 64)) }},
		{"STDDEV_POP(DOUBLE)", "STDDEV_POP", types.Double, false, func(i int) types.Value { return types.DoubleValue(float64(i % 100)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var argTypes []types.Type
			if bc.val != nil {
				argTypes = []types.Type{bc.arg}
			}
			a := newAcc(b, bc.fn, bc.appendOnly, false, "", argTypes...)
			vals := make([]types.Value, 1024)
			for i := range vals {
				if bc.val != nil {
					vals[i] = bc.val(i)
				}
			}
			args := make([]types.Value, len(argTypes))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(args) > 0 {
					args[0] = vals[i%len(vals)]
				}
				if err := a.Add(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var strs = []string{"alpha", "bravo", "charlie", "delta", "echo"}

// BenchmarkGroupAdd measures a Group of typical calls folding one row.
func BenchmarkGroupAdd(b *testing.B) {
	r := NewRegistry()
	mk := func(name string, args []int, at ...types.Type) Call {
		f, _ := r.Lookup(name)
		rt, err := f.ResultType(at)
		if err != nil {
			b.Fatal(err)
		}
		return Call{Func: f, Args: args, ArgTypes: at, Result: rt, Filter: -1, AppendOnly: true}
	}
	calls := []Call{
		mk("COUNT", nil),
		mk("SUM", []int{1}, types.Decimal(10, 2)),
		mk("MAX", []int{0}, types.BigInt),
		mk("AVG", []int{0}, types.BigInt),
	}
	g := NewGroup(calls)
	scratch := make([]types.Value, MaxArgs(calls))
	row := []types.Value{types.BigIntValue(5), types.DecimalValue(1999, 2)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Add(calls, row, scratch); err != nil {
			b.Fatal(err)
		}
	}
}
