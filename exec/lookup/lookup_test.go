package lookup_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/lookupcache"
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

// reloading is a rowsSource reloaded every hour: its strings are copied
// out of the store.
type reloading struct{ rowsSource }

func (reloading) ReloadInterval() time.Duration { return time.Hour }

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

// newOp returns a lookup join by the first column of its input rows with
// a table of n rows (k, "vk"), and a second row for key 1.
func newOp(t testing.TB, reg *dim.Registry, n int, left bool, residual exec.RowPredicate, next exec.Operator) *lookup.Operator {
	t.Helper()
	src := rowsSource{}
	for k := range n {
		src.rows = append(src.rows, []types.Value{types.BigIntValue(int64(k)), types.StringValue(fmt.Sprint("v", k))})
	}
	src.rows = append(src.rows, []types.Value{types.BigIntValue(1), types.StringValue("dup")})
	return newOpOf(t, reg, src, left, residual, next)
}

// newOpOf returns a lookup join by the first column of its input rows with
// the table src, keyed by its first column.
func newOpOf(t testing.TB, reg *dim.Registry, src connector.FullSource, left bool, residual exec.RowPredicate, next exec.Operator) *lookup.Operator {
	t.Helper()
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

// TestOperatorOrder joins batches of random keys (hits, misses, NULLs,
// a key of 1,500 rows) and checks the output against a join row by row:
// the rows of each input row, in input order, its first one with its
// origin, a LEFT join's unmatched rows padded where they were.
func TestOperatorOrder(t *testing.T) {
	src := rowsSource{}
	for k := range 100 {
		for j := range k % 4 { // keys 0, 4, 8, ... have no row
			src.rows = append(src.rows, []types.Value{types.BigIntValue(int64(k)), types.StringValue(fmt.Sprintf("%d:%d", k, j))})
		}
	}
	for j := range 1500 {
		src.rows = append(src.rows, []types.Value{types.BigIntValue(7), types.StringValue(fmt.Sprintf("7:%d", j+3))})
	}
	byKey := map[int64][]string{}
	for _, r := range src.rows {
		byKey[r[0].Int()] = append(byKey[r[0].Int()], r[1].Str())
	}
	// The residual drops the second row of every key.
	residual := func(row []types.Value) (bool, error) { return !strings.HasSuffix(row[3].Str(), ":1"), nil }
	rng := rand.New(rand.NewPCG(1, 2))
	for _, left := range []bool{false, true} {
		reg := dim.NewRegistry(dim.Options{})
		out := &collect{}
		op := newOpOf(t, reg, src, left, residual, out)
		if err := op.Open(&exec.Context{Ctx: context.Background()}); err != nil {
			t.Fatal(err)
		}
		var want []string
		idx := 0
		for range 8 {
			b := types.NewBatch(512, 2)
			for range 1 + rng.IntN(400) {
				k := types.BigIntValue(rng.Int64N(120))
				if rng.IntN(10) == 0 {
					k = types.Value{}
				}
				vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(idx)}, 2)
				vals[0], vals[1] = k, types.BigIntValue(int64(idx))
				var vs []string
				if !k.IsNull() {
					for _, v := range byKey[k.Int()] {
						if !strings.HasSuffix(v, ":1") {
							vs = append(vs, v)
						}
					}
				}
				slices.Sort(vs)
				for _, v := range vs {
					want = append(want, fmt.Sprintf("%d %s", idx, v))
				}
				if len(vs) == 0 && left {
					want = append(want, fmt.Sprintf("%d null", idx))
				}
				idx++
			}
			if err := op.Process(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		// The rows of one input row come in no set order: sort them
		// within it, and check the origins on the way.
		var got []string
		prev := int64(-1)
		for _, r := range out.rows {
			in := r.Vals[1].Int()
			switch {
			case in != prev && (r.Origin.Part != 0 || r.Origin.Offset != in):
				t.Fatalf("left=%v: the first row of input %d has origin %+v", left, in, r.Origin)
			case in == prev && r.Origin != types.NoOrigin:
				t.Fatalf("left=%v: a second row of input %d has origin %+v", left, in, r.Origin)
			case in < prev:
				t.Fatalf("left=%v: input %d after input %d", left, in, prev)
			}
			prev = in
			v := "null"
			if !r.Vals[3].IsNull() {
				v = r.Vals[3].Str()
			}
			got = append(got, fmt.Sprintf("%d %s", in, v))
		}
		sortWithin(got)
		if len(got) != len(want) {
			t.Fatalf("left=%v: %d rows, want %d", left, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("left=%v: row %d is %q, want %q", left, i, got[i], want[i])
			}
		}
	}
}

// cachedSource is an on-demand dimension table behind the per-job cache
// that the jdbc and redis connectors use; fetches counts what reached it.
type cachedSource struct {
	*lookupcache.Lookuper
	fetches int
}

func (*cachedSource) Close() error { return nil }

// TestKeyedCache joins through an on-demand table with a cache that keeps
// missing keys, and checks the rows and the cache counters in the job's
// metrics: each distinct key reaches the table once.
func TestKeyedCache(t *testing.T) {
	src := &cachedSource{}
	settings := lookupcache.Settings{Mode: lookupcache.Partial, Cache: lookupcache.Config{MaxRows: 100, CacheMissingKey: true}}
	src.Lookuper = lookupcache.NewLookuper(settings, func(_ context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
		src.fetches++
		if k := key[0].Int(); k%2 == 0 { // even keys have a row
			dst = append(dst, []types.Value{key[0], types.StringValue(fmt.Sprint("v", k))})
		}
		return dst, nil
	}, nil)
	out := &collect{}
	op, err := lookup.New(lookup.Config{
		Left:     true,
		Key:      []exec.RowFunc{func(row []types.Value) (types.Value, error) { return row[0], nil }},
		DimWidth: 2,
		Open: func(context.Context) (lookup.Dim, error) {
			return &lookup.Keyed{L: src, KeyCols: []int{0}}, nil
		},
		Next: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &exec.Metrics{}
	if err := op.Open(&exec.Context{Ctx: context.Background(), Metrics: m}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b := types.NewBatch(8, 1)
		for _, k := range []int64{1, 2, 3, 4, 2} {
			b.AddRow(types.Insert, types.NoOrigin, 1)[0] = types.BigIntValue(k)
		}
		if err := op.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.rows[:5] {
		got = append(got, formatRow(r.Vals))
	}
	if g := fmt.Sprint(got); g != "[[1 null null] [2 2 v2] [3 null null] [4 4 v4] [2 2 v2]]" {
		t.Errorf("rows of the first batch: %s", g)
	}
	if len(out.rows) != 15 {
		t.Errorf("%d rows, want 15", len(out.rows))
	}
	if src.fetches != 4 || m.LookupCacheMisses.Load() != 4 || m.LookupCacheHits.Load() != 11 || m.LookupFetches.Load() != 4 {
		t.Errorf("%d fetches (%d counted), cache: %d misses, %d hits; want 4, 4, 11", src.fetches, m.LookupFetches.Load(), m.LookupCacheMisses.Load(), m.LookupCacheHits.Load())
	}
	if m.Lookups.Load() != 15 || m.LookupHits.Load() != 9 {
		t.Errorf("lookups %d, hits %d; want 15 and 9", m.Lookups.Load(), m.LookupHits.Load())
	}
}

// sortWithin sorts runs of rows of one input row ("idx value") by value.
func sortWithin(rows []string) {
	for i := 0; i < len(rows); {
		j := i + 1
		p := strings.Fields(rows[i])[0]
		for j < len(rows) && strings.Fields(rows[j])[0] == p {
			j++
		}
		slices.Sort(rows[i:j])
		i = j
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

// BenchmarkOperator joins batches of 1,024 rows of random keys with a
// table of 100,000 rows (in the CPU caches, mostly) and of 4 million (not),
// every key a hit; "copied": a table that reloads, whose strings are
// copied out of the store.
func BenchmarkOperator(b *testing.B) {
	for _, n := range []int{100_000, 4_000_000} {
		for _, copied := range []bool{false, true} {
			name := fmt.Sprint(n)
			if copied {
				name += "/copied"
			}
			b.Run(name, func(b *testing.B) {
				src := rowsSource{}
				for k := range n {
					src.rows = append(src.rows, []types.Value{types.BigIntValue(int64(k)), types.StringValue(fmt.Sprint("value ", k))})
				}
				var fs connector.FullSource = src
				if copied {
					fs = reloading{src}
				}
				reg := dim.NewRegistry(dim.Options{})
				op := newOpOf(b, reg, fs, false, nil, &exec.Passthrough{Next: discard{}})
				if err := op.Open(&exec.Context{Ctx: context.Background()}); err != nil {
					b.Fatal(err)
				}
				defer op.Close()
				rng := rand.New(rand.NewPCG(1, 2))
				batches := make([]*types.Batch, 64)
				for i := range batches {
					batches[i] = types.NewBatch(1024, 1)
					for range 1024 {
						batches[i].AddRow(types.Insert, types.NoOrigin, 1)[0] = types.BigIntValue(rng.Int64N(int64(n)))
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				i := 0
				for b.Loop() {
					if err := op.Process(batches[i%len(batches)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(i*1024)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(i*1024), "ns/row")
			})
		}
	}
}

type discard struct{}

func (discard) Open(*exec.Context) error   { return nil }
func (discard) Process(*types.Batch) error { return nil }
func (discard) Watermark(int64) error      { return nil }
func (discard) Finish() error              { return nil }
func (discard) Close() error               { return nil }
