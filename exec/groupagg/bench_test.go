package groupagg

import (
	"strconv"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// discard is a downstream operator that drops everything.
type discard struct{ rows int }

func (d *discard) Open(*exec.Context) error     { return nil }
func (d *discard) Process(b *types.Batch) error { d.rows += b.Len(); return nil }
func (d *discard) Watermark(int64) error        { return nil }
func (d *discard) Finish() error                { return nil }
func (d *discard) Close() error                 { return nil }

// BenchmarkGroupAgg is SELECT k, COUNT(*), SUM(price) FROM t GROUP BY k with
// price DECIMAL(10, 2), over 10k keys, in batches of the given size. One op
// is one input row, so allocs/op is allocations per row.
func BenchmarkGroupAgg(b *testing.B) {
	for _, batchRows := range []int{64, 1024} {
		for _, appendOnly := range []bool{false, true} {
			name := "batch=" + strconv.Itoa(batchRows)
			if appendOnly {
				name += "/append-only"
			}
			b.Run(name, func(b *testing.B) { benchGroupAgg(b, 10000, batchRows, appendOnly) })
		}
	}
}

func benchGroupAgg(b *testing.B, nKeys, batchRows int, appendOnly bool) {
	reg := agg.NewRegistry()
	count, _ := reg.Lookup("COUNT")
	sum, _ := reg.Lookup("SUM")
	price := types.Decimal(10, 2)
	sumType, _ := sum.ResultType([]types.Type{price})
	next := &discard{}
	op, err := New(Config{
		ID:   "bench",
		Keys: []int{0},
		Calls: []agg.Call{
			{Func: count, Result: types.BigInt.WithNullable(false), Filter: -1},
			{Func: sum, Args: []int{1}, ArgTypes: []types.Type{price}, Result: sumType, Filter: -1},
		},
		AppendOnlyInput: appendOnly,
		Next:            next,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&exec.Context{State: state.NewMemory(), Metrics: &exec.Metrics{}}); err != nil {
		b.Fatal(err)
	}
	keys := make([]types.Value, nKeys)
	for i := range keys {
		keys[i] = types.StringValue("key-" + strconv.Itoa(i))
	}
	// Pre-built batches cycling through the keys in a scrambled order.
	const nBatches = 64
	batches := make([]*types.Batch, nBatches)
	for i := range batches {
		bt := types.NewBatch(batchRows, 2)
		for j := range batchRows {
			n := i*batchRows + j
			vals := bt.AddRow(types.Insert, types.NoOrigin, 2)
			vals[0] = keys[(n*7919)%nKeys]
			vals[1] = types.DecimalValue(int64(n%10000), 2)
		}
		batches[i] = bt
	}
	// Warm up: create every group.
	for _, bt := range batches {
		if err := op.Process(bt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	rows := 0
	for i := 0; rows < b.N; i++ {
		if err := op.Process(batches[i%nBatches]); err != nil {
			b.Fatal(err)
		}
		rows += batchRows
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
