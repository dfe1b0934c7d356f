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

// BenchmarkGroupAggQ17 has the shape of Nexmark q17: GROUP BY auction, day
// with COUNT(*), three COUNT(*) FILTER, MIN, MAX, AVG and SUM of a BIGINT
// price, append-only input, over a stream where new keys keep coming
// (about 15 rows per key, interleaved). One op is one input row.
func BenchmarkGroupAggQ17(b *testing.B) {
	reg := agg.NewRegistry()
	fn := func(name string) agg.Func {
		f, err := reg.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	bigint := types.BigInt.WithNullable(false)
	priceArg := []int{5}
	priceType := []types.Type{bigint}
	call := func(name string, args []int, argTypes []types.Type, filter int) agg.Call {
		f := fn(name)
		rt, err := f.ResultType(argTypes)
		if err != nil {
			b.Fatal(err)
		}
		return agg.Call{Func: f, Args: args, ArgTypes: argTypes, Result: rt, Filter: filter}
	}
	next := &discard{}
	op, err := New(Config{
		ID:   "bench",
		Keys: []int{0, 1},
		Calls: []agg.Call{
			call("COUNT", nil, nil, -1), call("COUNT", nil, nil, 2), call("COUNT", nil, nil, 3), call("COUNT", nil, nil, 4),
			call("MIN", priceArg, priceType, -1), call("MAX", priceArg, priceType, -1),
			call("AVG", priceArg, priceType, -1), call("SUM", priceArg, priceType, -1),
		},
		AppendOnlyInput: true,
		Next:            next,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&exec.Context{State: state.NewMemory(), Metrics: &exec.Metrics{}}); err != nil {
		b.Fatal(err)
	}
	const batchRows = 256
	day := types.StringValue("2015-07-15")
	batch := types.NewBatch(batchRows, 6)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		batch.Reset()
		for range batchRows {
			price := int64(i*7919) % 2000000
			vals := batch.AddRow(types.Insert, types.NoOrigin, 6)
			vals[0] = types.BigIntValue(int64(i/15 + (i%5)*200))
			vals[1] = day
			vals[2] = types.BoolValue(price < 10000)
			vals[3] = types.BoolValue(price >= 10000 && price < 1000000)
			vals[4] = types.BoolValue(price >= 1000000)
			vals[5] = types.BigIntValue(price)
			i++
		}
		if err := op.Process(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(next.rows)/float64(b.N), "out-rows/op")
}
