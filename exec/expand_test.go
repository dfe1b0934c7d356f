package exec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// rowCollector records the rows that reach it, as text.
type rowCollector struct {
	Discard
	rows []string
}

func (c *rowCollector) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		var vals []string
		for _, v := range r.Vals {
			if v.IsNull() {
				vals = append(vals, "null")
			} else {
				vals = append(vals, fmt.Sprint(v.Int()))
			}
		}
		c.rows = append(c.rows, fmt.Sprintf("%s%v[%s]", r.Kind, r.Origin, strings.Join(vals, ", ")))
	}
	return nil
}

// TestExpand expands (a, b, v) by ROLLUP(a, b), as Flink's Expand does:
// {a, b, v, 0 AS $e}, {a, null AS b, v, 1 AS $e}, {null AS a, null AS b,
// v, 3 AS $e}, plus a copy of a (MAX(a) reads it where the set puts NULL).
// Kinds pass through; only the first row of an input row keeps its origin.
func TestExpand(t *testing.T) {
	out := &rowCollector{}
	e := &Expand{
		Projects: [][]int{{0, 1, 2, -1, 0}, {0, -1, 2, -1, 0}, {-1, -1, 2, -1, 0}},
		IDs:      []int64{0, 1, 3},
		IDCol:    3,
		Next:     out,
	}
	if err := e.Open(&Context{}); err != nil {
		t.Fatal(err)
	}
	in := types.NewBatch(2, 3)
	for i, kind := range []types.RowKind{types.Insert, types.UpdateBefore} {
		v := in.AddRow(kind, types.Origin{Part: 0, Offset: int64(i + 1)}, 3)
		v[0], v[1], v[2] = types.BigIntValue(int64(10+i)), types.BigIntValue(20), types.BigIntValue(int64(i))
	}
	if err := e.Process(in); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I{0 1}[10, 20, 0, 0, 10]", "+I{-1 0}[10, null, 0, 1, 10]", "+I{-1 0}[null, null, 0, 3, 10]",
		"-U{0 2}[11, 20, 1, 0, 11]", "-U{-1 0}[11, null, 1, 1, 11]", "-U{-1 0}[null, null, 1, 3, 11]",
	}
	if !slices.Equal(out.rows, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(out.rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestExpandReusesBatches: a batch that expands to more than one output
// batch is pushed downstream in pieces, each row whole, and the output
// batch is reused: nothing is allocated per row once it has grown.
func TestExpandReusesBatches(t *testing.T) {
	out := &countRows{}
	e := &Expand{Projects: [][]int{{0, -1}, {-1, -1}, {0, -1}}, IDs: []int64{0, 1, 2}, IDCol: 1, Next: out}
	if err := e.Open(&Context{}); err != nil {
		t.Fatal(err)
	}
	in := types.NewBatch(1000, 1)
	for i := range 1000 {
		in.AddRow(types.Insert, types.NoOrigin, 1)[0] = types.BigIntValue(int64(i))
	}
	if err := e.Process(in); err != nil {
		t.Fatal(err)
	}
	if out.n != 3000 || out.batches < 3 {
		t.Fatalf("got %d rows in %d batches, want 3000 rows in at least 3", out.n, out.batches)
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = e.Process(in) }); allocs > 0 {
		t.Fatalf("%v allocations per batch of 1000 rows", allocs)
	}
}

type countRows struct {
	Discard
	n, batches int
}

func (c *countRows) Process(b *types.Batch) error {
	c.n += len(b.Rows)
	c.batches++
	return nil
}

// BenchmarkExpand expands batches of 1024 rows of 4 columns by CUBE of
// two keys (4 sets) with a copy of one key.
func BenchmarkExpand(b *testing.B) {
	e := &Expand{
		Projects: [][]int{{0, 1, 2, 3, -1, 0}, {0, -1, 2, 3, -1, 0}, {-1, 1, 2, 3, -1, 0}, {-1, -1, 2, 3, -1, 0}},
		IDs:      []int64{0, 1, 2, 3},
		IDCol:    4,
		Next:     Discard{},
	}
	if err := e.Open(&Context{}); err != nil {
		b.Fatal(err)
	}
	in := types.NewBatch(1024, 4)
	for i := range 1024 {
		v := in.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(i)}, 4)
		for j := range v {
			v[j] = types.BigIntValue(int64(i + j))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := e.Process(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*1024/b.Elapsed().Seconds(), "inrows/s")
}
