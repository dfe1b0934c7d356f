package lookup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/lookup"
	"github.com/sluicesql/sluice/types"
)

// rowsSource is a FullSource over rows held in memory.
type rowsSource struct{ rows [][]types.Value }

func (s rowsSource) Load(_ context.Context, emit func(row []types.Value) error) error {
	for _, r := range s.rows {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}
func (rowsSource) ReloadInterval() time.Duration { return 0 }
func (rowsSource) Identity() string              { return "rows" }
func (rowsSource) Close() error                  { return nil }

// collect keeps the rows it is given.
type collect struct {
	exec.Passthrough
	rows []types.Row
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		c.rows = append(c.rows, types.CopyRow(r))
	}
	return nil
}
func (c *collect) Close() error { return nil }

var dimTypes = []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}}

func newOp(t testing.TB, reg *dim.Registry, n int, left bool, residual exec.RowPredicate, next exec.Operator) *lookup.Operator {
	t.Helper()
	src := rowsSource{}
	for k := range n {
		src.rows = append(src.rows, []types.Value{types.BigIntValue(int64(k)), types.StringValue(fmt.Sprint("v", k))})
	}
	src.rows = append(src.rows, []types.Value{types.BigIntValue(1), types.StringValue("dup")})
	op, err := lookup.New(lookup.Config{
		Left:     left,
		Key:      []exec.RowFunc{func(row []types.Value) (types.Value, error) { return row[0], nil }},
		DimWidth: 2,
		Residual: residual,
		Open: func(ctx context.Context) (lookup.Dim, error) {
			h, err := reg.Acquire(ctx, src, dimTypes, []int{0})
			if err != nil {
				return nil, err
			}
			return lookup.Shared{H: h}, nil
		},
		Next: next,
	})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func TestOperator(t *testing.T) {
	for _, left := range []bool{false, true} {
		reg := dim.NewRegistry(dim.Options{})
		out := &collect{}
		// Residual: the dimension value is not "v3".
		op := newOp(t, reg, 5, left, func(row []types.Value) (bool, error) { return row[2].Str() != "v3", nil }, out)
		m := &exec.Metrics{}
		if err := op.Open(&exec.Context{Ctx: context.Background(), Metrics: m}); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(8, 1)
		for i, k := range []types.Value{types.BigIntValue(1), types.BigIntValue(3), {}, types.BigIntValue(9)} {
			b.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(i + 1)}, 1)[0] = k
		}
		if err := op.Process(b); err != nil {
			t.Fatal(err)
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out.rows {
			got = append(got, fmt.Sprintf("%v@%d:%d", formatRow(r.Vals), r.Origin.Part, r.Origin.Offset))
		}
		// Key 1 has two rows, in no set order: the first one emitted
		// keeps the left row's origin, the other has none.
		want, other := "[1 1 v1]@0:1 [1 1 dup]@-1:0", "[1 1 dup]@0:1 [1 1 v1]@-1:0"
		if left {
			rest := " [3 null null]@0:2 [null null null]@0:3 [9 null null]@0:4"
			want, other = want+rest, other+rest
		}
		if g := fmt.Sprint(got); g != "["+want+"]" && g != "["+other+"]" {
			t.Errorf("left=%v: got %v, want [%s]", left, got, want)
		}
		if m.Lookups.Load() != 3 || m.LookupHits.Load() != 2 {
			t.Errorf("left=%v: lookups %d, hits %d; want 3 and 2", left, m.Lookups.Load(), m.LookupHits.Load())
		}
		if reg.Tables() != 0 {
			t.Errorf("the table outlived the operator")
		}
	}
}

func formatRow(vals []types.Value) string {
	s := "["
	for i, v := range vals {
		if i > 0 {
			s += " "
		}
		switch {
		case v.IsNull():
			s += "null"
		case v.Kind() == types.KindVarChar:
			s += v.Str()
		default:
			s += fmt.Sprint(v.Int())
		}
	}
	return s + "]"
}

// BenchmarkOperator joins batches of 256 rows with a table of 100,000
// rows, every key a hit.
func BenchmarkOperator(b *testing.B) {
	reg := dim.NewRegistry(dim.Options{})
	op := newOp(b, reg, 100_000, false, nil, &exec.Passthrough{Next: discard{}})
	if err := op.Open(&exec.Context{Ctx: context.Background()}); err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	batch := types.NewBatch(256, 1)
	for i := range 256 {
		batch.AddRow(types.Insert, types.NoOrigin, 1)[0] = types.BigIntValue(int64(i*373) % 100_000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := op.Process(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "rows/s")
}

type discard struct{}

func (discard) Open(*exec.Context) error   { return nil }
func (discard) Process(*types.Batch) error { return nil }
func (discard) Watermark(int64) error      { return nil }
func (discard) Finish() error              { return nil }
func (discard) Close() error               { return nil }
