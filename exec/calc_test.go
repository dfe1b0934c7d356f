package exec_test

import (
	"fmt"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// rowCollector keeps copies of the rows that reach it.
type rowCollector struct {
	rowCounter
	got []string
}

func (c *rowCollector) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		line := fmt.Sprint(r.Kind, r.Origin)
		for _, v := range r.Vals {
			if v.Kind() == types.KindVarChar {
				line += " " + v.Str()
			} else {
				line += fmt.Sprint(" ", v.Int())
			}
		}
		c.got = append(c.got, line)
	}
	return nil
}

// TestCalcCopiedColumns checks that output columns named in Cols (a
// leading run copied at once, others one by one, repeated, out of order)
// give the rows the same projections give when computed.
func TestCalcCopiedColumns(t *testing.T) {
	colFunc := func(i int) exec.RowFunc {
		return func(row []types.Value) (types.Value, error) { return row[i], nil }
	}
	plus := func(row []types.Value) (types.Value, error) {
		return types.BigIntValue(row[0].Int() + row[2].Int()), nil
	}
	cols := []int{0, 1, -1, 2, 0, 1}
	projs := []exec.RowFunc{colFunc(0), colFunc(1), plus, colFunc(2), colFunc(0), colFunc(1)}
	in := types.NewBatch(4, 3)
	for i := range 5 {
		v := in.AddRow(types.RowKind(i%4), types.Origin{Part: 1, Offset: int64(i)}, 3)
		v[0], v[1], v[2] = types.BigIntValue(int64(i)), types.StringValue(fmt.Sprint("s", i)), types.BigIntValue(10)
	}
	keep := func(row []types.Value) (bool, error) { return row[0].Int() != 3, nil }
	run := func(cols []int) []string {
		out := &rowCollector{}
		c := &exec.Calc{Filter: keep, Projs: projs, Cols: cols, Next: out}
		if err := c.Open(&exec.Context{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Process(in); err != nil {
			t.Fatal(err)
		}
		return out.got
	}
	want, got := run(nil), run(cols)
	if len(want) != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("with Cols %v:\n got %v\nwant %v", cols, got, want)
	}
	if want[0] != "+I {1 0} 0 s0 10 10 0 s0" {
		t.Fatalf("first row %q", want[0])
	}
}
