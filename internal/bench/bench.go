// Package bench holds the engine's headline benchmarks, shared by
// `go test -bench` (in package exec) and `sluice bench`, so that both
// report the same measurement.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/exec/lookup"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// BatchSize is the number of rows per batch in these benchmarks.
const BatchSize = 1024

// counter counts rows at the end of a chain.
type counter struct{ rows int64 }

func (c *counter) Open(*exec.Context) error     { return nil }
func (c *counter) Process(b *types.Batch) error { c.rows += int64(len(b.Rows)); return nil }
func (c *counter) Watermark(int64) error        { return nil }
func (c *counter) Finish() error                { return nil }
func (c *counter) Close() error                 { return nil }

// bidBatch builds a batch of bids: (bidtime TIMESTAMP(3), price
// DECIMAL(10,2), item STRING, supplier STRING), with keys distinct keys.
func bidBatch(start int64, keys int) *types.Batch {
	b := types.NewBatch(BatchSize, 4)
	items, suppliers := itemNames(), supplierNames()
	for i := 0; i < BatchSize; i++ {
		n := start + int64(i)
		v := b.AddRow(types.Insert, types.NoOrigin, 4)
		v[0] = types.TimestampValue(n * 1000) // one row per millisecond
		v[1] = types.DecimalValue(100+n%900, 2)
		v[2] = types.StringValue(items[int(n)%len(items)])
		v[3] = types.StringValue(suppliers[int(n%int64(keys))%len(suppliers)])
	}
	return b
}

// itemNames and supplierNames are made on first use, not when the
// binary starts: every sluice command links this package.
var itemNames = sync.OnceValue(func() []string {
	out := make([]string, 64)
	for i := range out {
		out[i] = fmt.Sprintf("item-%02d", i)
	}
	return out
})

var supplierNames = sync.OnceValue(func() []string {
	out := make([]string, 10000)
	for i := range out {
		out[i] = fmt.Sprintf("supplier-%05d", i)
	}
	return out
})

var bidSchema = []types.Type{types.Timestamp(3), types.Decimal(10, 2), types.String, types.String}

func col(i int) expr.Node {
	return &expr.Column{Index: i, Name: fmt.Sprintf("c%d", i), T: bidSchema[i]}
}

// FilterProject measures WHERE price > 5.00 AND item <> 'item-07' with the
// projection (bidtime, price * 2, item) over in-memory batches.
func FilterProject(b *testing.B) {
	bld := expr.NewBuilder(expr.NewRegistry())
	must := func(n expr.Node, err error) expr.Node {
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	five := &expr.Literal{V: types.DecimalValue(500, 2), T: types.Decimal(3, 2).WithNullable(false)}
	two := &expr.Literal{V: types.IntValue(types.KindInt, 2), T: types.Int.WithNullable(false)}
	item7 := &expr.Literal{V: types.StringValue("item-07"), T: types.String.WithNullable(false)}
	cond := must(bld.Call("AND", must(bld.Call(">", col(1), five)), must(bld.Call("<>", col(2), item7))))
	env := &expr.Env{Now: func() int64 { return 0 }}
	pred, err := expr.CompilePredicate(cond, env)
	if err != nil {
		b.Fatal(err)
	}
	var projs []exec.RowFunc
	for _, n := range []expr.Node{col(0), must(bld.Call("*", col(1), two)), col(2)} {
		ev, err := expr.Compile(n, env)
		if err != nil {
			b.Fatal(err)
		}
		projs = append(projs, exec.RowFunc(ev))
	}
	sink := &counter{}
	calc := &exec.Calc{Filter: exec.RowPredicate(pred), Projs: projs, Next: sink}
	if err := calc.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	in := bidBatch(0, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += BatchSize {
		if err := calc.Process(in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if sink.rows == 0 {
		b.Fatal("filter dropped every row")
	}
	reportRows(b)
}

// TumbleAggregate measures a 1-minute TUMBLE with COUNT(*), SUM(price) and
// MAX(bidtime) grouped by 10,000 supplier keys.
func TumbleAggregate(b *testing.B) {
	reg := agg.NewRegistry()
	call := func(name string, args ...int) agg.Call {
		f, err := reg.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		c := agg.Call{Func: f, Args: args, Filter: -1}
		for _, a := range args {
			c.ArgTypes = append(c.ArgTypes, bidSchema[a])
		}
		if c.Result, err = f.ResultType(c.ArgTypes); err != nil {
			b.Fatal(err)
		}
		return c
	}
	sink := &counter{}
	op, err := window.NewAggregate(window.AggregateConfig{
		ID:      "bench/tumble",
		Spec:    window.Spec{Kind: window.Tumble, Size: 60_000_000},
		TimeCol: 0,
		Keys:    []int{3},
		Calls:   []agg.Call{call("COUNT"), call("SUM", 1), call("MAX", 0)},
		Next:    sink,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&exec.Context{State: state.NewMemory(), Now: func() int64 { return 0 }}); err != nil {
		b.Fatal(err)
	}
	// Pre-build the input so that the timed loop measures the operator.
	const distinct = 64
	batches := make([]*types.Batch, distinct)
	for i := range batches {
		batches[i] = bidBatch(int64(i*BatchSize), 10000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var t int64
	for i := 0; i < b.N; i += BatchSize {
		in := batches[(i/BatchSize)%distinct]
		// Shift the batch forward in time so windows keep closing.
		shift := (int64(i/BatchSize) / distinct) * distinct * BatchSize * 1000
		for r := range in.Rows {
			in.Rows[r].Vals[0] = types.TimestampValue(int64((i/BatchSize)%distinct*BatchSize+r)*1000 + shift)
		}
		if err := op.Process(in); err != nil {
			b.Fatal(err)
		}
		t = in.Rows[len(in.Rows)-1].Vals[0].Int()
		if err := op.Watermark(t - 1000); err != nil {
			b.Fatal(err)
		}
	}
	if err := op.Watermark(exec.MaxWatermark); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if sink.rows == 0 {
		b.Fatal("no window fired")
	}
	reportRows(b)
}

func reportRows(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "rows/s")
	}
}

// lookupRows is the size of LookupJoin's dimension table: larger than the
// CPU caches, as reference tables are.
const lookupRows = 1 << 20

// lookupTable is a dimension table of lookupRows rows (id BIGINT, name
// STRING, tier INT), loaded in full.
type lookupTable struct{}

func (lookupTable) Load(_ context.Context, emit func(row []types.Value) error) error {
	row := make([]types.Value, 3)
	for i := range lookupRows {
		row[0] = types.BigIntValue(int64(i))
		row[1] = types.StringValue(supplierNames()[i%len(supplierNames())])
		row[2] = types.Int32Value(int32(i % 5))
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}
func (lookupTable) ReloadInterval() time.Duration { return 0 }
func (lookupTable) Identity() string              { return "bench/lookup" }
func (lookupTable) Close() error                  { return nil }

// LookupJoin measures an INNER lookup join of rows with random keys against
// a table of a million rows in the compact store, every key a hit, a
// batch of rows looked up at once as the engine does.
func LookupJoin(b *testing.B) {
	reg := dim.NewRegistry(dim.Options{})
	colTypes := []types.Type{types.BigInt, types.String, types.Int}
	sink := &counter{}
	op, err := lookup.New(lookup.Config{
		Key:      []exec.RowFunc{func(row []types.Value) (types.Value, error) { return row[0], nil }},
		DimWidth: len(colTypes),
		Open: func(ctx context.Context) (lookup.Dim, error) {
			h, err := reg.Acquire(ctx, lookupTable{}, colTypes, []int{0})
			if err != nil {
				return nil, err
			}
			return lookup.Shared{H: h}, nil
		},
		Next: sink,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&exec.Context{Ctx: context.Background()}); err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	const distinct = 64
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([]*types.Batch, distinct)
	for i := range batches {
		batches[i] = types.NewBatch(BatchSize, 2)
		for range BatchSize {
			v := batches[i].AddRow(types.Insert, types.NoOrigin, 2)
			v[0], v[1] = types.BigIntValue(rng.Int64N(lookupRows)), types.DecimalValue(rng.Int64N(10000), 2)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += BatchSize {
		if err := op.Process(batches[(i/BatchSize)%distinct]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if sink.rows == 0 {
		b.Fatal("no row joined")
	}
	reportRows(b)
}
