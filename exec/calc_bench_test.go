package exec_test

import (
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/types"
)

// nexmarkRowType is the datagen table of the Nexmark suite: event_type,
// then one ROW per event kind, of which one is set.
var nexmarkRowType = []types.Type{
	types.Int,
	types.RowOf(
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "emailAddress", Type: types.String}, types.Field{Name: "creditCard", Type: types.String},
		types.Field{Name: "city", Type: types.String}, types.Field{Name: "state", Type: types.String},
		types.Field{Name: "dateTime", Type: types.Timestamp(3)}, types.Field{Name: "extra", Type: types.String}),
	types.RowOf(
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "itemName", Type: types.String},
		types.Field{Name: "description", Type: types.String}, types.Field{Name: "initialBid", Type: types.BigInt},
		types.Field{Name: "reserve", Type: types.BigInt}, types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "expires", Type: types.Timestamp(3)}, types.Field{Name: "seller", Type: types.BigInt},
		types.Field{Name: "category", Type: types.BigInt}, types.Field{Name: "extra", Type: types.String}),
	types.RowOf(
		types.Field{Name: "auction", Type: types.BigInt}, types.Field{Name: "bidder", Type: types.BigInt},
		types.Field{Name: "price", Type: types.BigInt}, types.Field{Name: "channel", Type: types.String},
		types.Field{Name: "url", Type: types.String}, types.Field{Name: "dateTime", Type: types.Timestamp(3)},
		types.Field{Name: "extra", Type: types.String}),
}

// nexmarkBatch is a batch of 1024 datagen rows in the generator's mix: of
// every 50 events 1 person, 3 auctions and 46 bids.
func nexmarkBatch() *types.Batch {
	b := types.NewBatch(1024, 4)
	for i := range 1024 {
		ts := types.TimestampValue(int64(i) * 100)
		v := b.AddRow(types.Insert, types.Origin{Offset: int64(i)}, 4)
		switch n := i % 50; {
		case n == 0:
			v[0] = types.Int32Value(0)
			v[1] = types.RowValue([]types.Value{types.BigIntValue(int64(i)), types.StringValue("Sarah Shultz"),
				types.StringValue("sarah@example.com"), types.StringValue("1234 5678 9012 3456"),
				types.StringValue("Boise"), types.StringValue("ID"), ts, types.StringValue("extra")})
		case n < 4:
			v[0] = types.Int32Value(1)
			v[2] = types.RowValue([]types.Value{types.BigIntValue(int64(i)), types.StringValue("item"),
				types.StringValue("description"), types.BigIntValue(100), types.BigIntValue(200), ts, ts,
				types.BigIntValue(7), types.BigIntValue(10), types.StringValue("extra")})
		default:
			v[0] = types.Int32Value(2)
			v[3] = types.RowValue([]types.Value{types.BigIntValue(int64(i % 97)), types.BigIntValue(int64(i)),
				types.BigIntValue(int64(i) * 31), types.StringValue("Google"),
				types.StringValue("https://www.nexmark.com/abc/def/ghi/item.htm?query=1&channel_id=123"),
				ts, types.StringValue("extra extra extra")})
		}
	}
	return b
}

type rowCounter struct{ rows int }

func (c *rowCounter) Open(*exec.Context) error     { return nil }
func (c *rowCounter) Process(b *types.Batch) error { c.rows += len(b.Rows); return nil }
func (c *rowCounter) Watermark(int64) error        { return nil }
func (c *rowCounter) Finish() error                { return nil }
func (c *rowCounter) Close() error                 { return nil }

// BenchmarkNexmarkQ0Chain measures the operators Nexmark q0 runs per event
// after the source: the datagen computed column (a CASE over the event
// kind), the watermark, and the bid view's filter and field projection.
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench NexmarkQ0Chain -benchmem
func BenchmarkNexmarkQ0Chain(b *testing.B) {
	bld := expr.NewBuilder(expr.NewRegistry())
	must := func(n expr.Node, err error) expr.Node {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	col := func(i int) expr.Node {
		return &expr.Column{Index: i, Name: "c", T: nexmarkRowType[min(i, 3)]}
	}
	lit := func(v types.Value, t types.Type) expr.Node { return &expr.Literal{V: v, T: t.WithNullable(false)} }
	field := func(c int, name string) expr.Node {
		return must(bld.Call("FIELD", col(c), lit(types.StringValue(name), types.String)))
	}
	isKind := func(k int32) expr.Node { return must(bld.Call("=", col(0), lit(types.Int32Value(k), types.Int))) }
	dateTime := must(bld.Case(nil, []expr.Node{isKind(0), isKind(1)},
		[]expr.Node{field(1, "dateTime"), field(2, "dateTime")}, field(3, "dateTime")))
	compile := func(n expr.Node) exec.RowFunc {
		ev, err := expr.Compile(n, nil)
		if err != nil {
			b.Fatal(err)
		}
		return exec.RowFunc(ev)
	}
	pred, err := expr.CompilePredicate(isKind(2), nil)
	if err != nil {
		b.Fatal(err)
	}
	dt := &expr.Column{Index: 4, Name: "dateTime", T: types.Timestamp(3)}
	wm := must(bld.Call("-", dt, lit(types.IntervalDayTimeValue(4_000_000), types.IntervalDT)))
	sink := &rowCounter{}
	query := &exec.Calc{Filter: exec.RowPredicate(pred), Next: sink, Projs: []exec.RowFunc{
		compile(field(3, "auction")), compile(field(3, "bidder")), compile(field(3, "price")),
		compile(dt), compile(field(3, "extra"))}, Cols: []int{-1, -1, -1, 4, -1}}
	assigner := &exec.WatermarkAssigner{Expr: compile(wm), Next: query}
	computed := &exec.Calc{Next: assigner, Projs: []exec.RowFunc{
		compile(col(0)), compile(col(1)), compile(col(2)), compile(col(3)), compile(dateTime)},
		Cols: []int{0, 1, 2, 3, -1}}
	if err := computed.Open(&exec.Context{Now: func() int64 { return 0 }}); err != nil {
		b.Fatal(err)
	}
	in := nexmarkBatch()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Seconds()
	for i := 0; i < b.N; i += in.Len() {
		if err := computed.Process(in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(c*1e9/float64(b.N), "cpu-ns/row")
	}
	if sink.rows == 0 {
		b.Fatal("the filter dropped every row")
	}
}
