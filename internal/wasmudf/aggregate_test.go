package wasmudf_test

import (
	"testing"

	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/internal/wasmudf"
	"github.com/sluicesql/sluice/types"
)

// An aggregate's accumulator is bytes the host keeps: it survives a trip
// through state, clones independently, and merges; bound to an instance
// of its own (agg.Bind) or sharing one, it computes the same.
func TestAggregateAccumulator(t *testing.T) {
	f := load(t, wasmudf.Spec{Name: "MY_AVG", Export: "my_avg", Params: []types.Type{types.BigInt}, Result: types.Double})
	if f.Kind() != wasmudf.Aggregate {
		t.Fatalf("kind = %v", f.Kind())
	}
	shared := f.AggregateFunction()
	calls, err := agg.Bind([]agg.Call{{Func: shared, Args: []int{0}, ArgTypes: []types.Type{types.BigInt}, Result: types.Double, Filter: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].Func == shared {
		t.Fatal("Bind kept the shared function")
	}
	for name, fn := range map[string]agg.Func{"shared": shared, "bound": calls[0].Func} {
		a := fn.New([]types.Type{types.BigInt}, types.Double)
		if v := a.Result(); !v.IsNull() {
			t.Errorf("%s: empty result = %v, want NULL", name, v)
		}
		for _, v := range []int64{2, 4, 9} {
			if err := a.Add([]types.Value{types.BigIntValue(v)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Add([]types.Value{types.NullValue}); err != nil { // skipped
			t.Fatal(err)
		}
		if err := a.Retract([]types.Value{types.BigIntValue(9)}); err != nil {
			t.Fatal(err)
		}
		c := a.Clone()
		if err := c.Add([]types.Value{types.BigIntValue(100)}); err != nil {
			t.Fatal(err)
		}
		if v := a.Result(); v.Float() != 3 {
			t.Errorf("%s: avg(2, 4) = %v (the clone changed it?)", name, v)
		}
		restored := fn.New([]types.Type{types.BigInt}, types.Double)
		if err := restored.LoadState(a.AppendState(nil)); err != nil {
			t.Fatal(err)
		}
		if err := restored.Merge(c); err != nil {
			t.Fatal(err)
		}
		if v := restored.Result(); v.Float() != 112.0/5 { // (2+4) and (2+4+100)
			t.Errorf("%s: merged avg = %v, want 22.4", name, v.Float())
		}
		restored.Reset()
		if v := restored.Result(); !v.IsNull() {
			t.Errorf("%s: reset result = %v, want NULL", name, v)
		}
	}
}
