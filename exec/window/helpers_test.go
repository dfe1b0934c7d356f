package window

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// Durations in microseconds.
const (
	ms  int64 = 1000
	sec       = 1000 * ms
	mnt       = 60 * sec
)

// ts parses "2006-01-02 15:04[:05[.000]]" as a UTC TIMESTAMP in microseconds.
func ts(t testing.TB, s string) int64 {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02 15:04:05.000"} {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm.UnixMicro()
		}
	}
	t.Fatalf("bad timestamp %q", s)
	return 0
}

// fmtTS prints a timestamp as the Flink docs do: without seconds when they
// are zero, with milliseconds when there are some.
func fmtTS(us int64) string {
	tm := time.UnixMicro(us).UTC()
	switch {
	case tm.Nanosecond()%int(time.Millisecond) != 0:
		return tm.Format("2006-01-02 15:04:05.000000")
	case tm.Nanosecond() != 0:
		return tm.Format("2006-01-02 15:04:05.000")
	case tm.Second() != 0:
		return tm.Format("2006-01-02 15:04:05")
	}
	return tm.Format("2006-01-02 15:04")
}

// fmtValue prints a value for golden comparisons.
func fmtValue(v types.Value) string {
	switch k := v.Kind(); {
	case k == types.KindNull:
		return "NULL"
	case k.IsTimestamp():
		return fmtTS(v.Int())
	case k == types.KindDecimal:
		u, s := v.BigUnscaled(), v.Scale()
		neg := u.Sign() < 0
		digits := new(big.Int).Abs(u).String()
		for len(digits) <= s {
			digits = "0" + digits
		}
		out := digits
		if s > 0 {
			out = digits[:len(digits)-s] + "." + digits[len(digits)-s:]
		}
		if neg {
			out = "-" + out
		}
		return out
	case k.IsString():
		return v.Str()
	case k == types.KindDouble || k == types.KindFloat:
		return fmt.Sprint(v.Float())
	case k == types.KindBoolean:
		return fmt.Sprint(v.Bool())
	}
	return fmt.Sprint(v.Int())
}

func fmtRow(r types.Row) string {
	parts := make([]string, len(r.Vals))
	for i, v := range r.Vals {
		parts[i] = fmtValue(v)
	}
	return r.Kind.String() + "[" + strings.Join(parts, ", ") + "]"
}

// recorder is the end of a chain: it logs rows and watermarks in order.
type recorder struct {
	events   []string
	rows     []types.Row
	tags     []int64 // per row: the watermark being processed when it came
	cur      *int64
	opened   bool
	finished bool
	closed   bool
}

func (r *recorder) Open(*exec.Context) error { r.opened = true; return nil }
func (r *recorder) Process(b *types.Batch) error {
	for _, row := range b.Rows {
		r.events = append(r.events, fmtRow(row))
		r.rows = append(r.rows, types.CopyRow(row))
		r.tags = append(r.tags, *r.cur)
	}
	return nil
}
func (r *recorder) Watermark(wm int64) error {
	r.events = append(r.events, "WM "+fmtWM(wm))
	return nil
}
func (r *recorder) Finish() error { r.finished = true; return nil }
func (r *recorder) Close() error  { r.closed = true; return nil }

func fmtWM(wm int64) string {
	switch wm {
	case exec.MaxWatermark:
		return "MAX"
	case exec.MinWatermark:
		return "MIN"
	}
	return fmtTS(wm)
}

// harness drives one operator under test.
type harness struct {
	t       testing.TB
	op      exec.Operator
	rec     *recorder
	metrics *exec.Metrics
	offset  int64
	wm      int64 // the watermark being processed, for recorder tags
}

func newHarness(t testing.TB, build func(next exec.Operator) (exec.Operator, error)) *harness {
	t.Helper()
	h := &harness{t: t, metrics: &exec.Metrics{}, wm: exec.MinWatermark}
	h.rec = &recorder{cur: &h.wm}
	op, err := build(h.rec)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op
	ctx := &exec.Context{Ctx: context.Background(), State: state.NewMemory(), Metrics: h.metrics}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

func newAgg(t testing.TB, cfg AggregateConfig) *harness {
	return newHarness(t, func(next exec.Operator) (exec.Operator, error) {
		cfg.Next = next
		return NewAggregate(cfg)
	})
}

func newAssign(t testing.TB, cfg AssignConfig) *harness {
	return newHarness(t, func(next exec.Operator) (exec.Operator, error) {
		cfg.Next = next
		return NewAssign(cfg)
	})
}

// send pushes rows as one batch, from partition 0 at increasing offsets.
func (h *harness) send(rows ...[]types.Value) {
	h.t.Helper()
	if err := h.sendErr(rows...); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sendErr(rows ...[]types.Value) error {
	b := types.NewBatch(len(rows), 4)
	for _, r := range rows {
		h.offset++
		b.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: 0, Offset: h.offset}, Vals: r})
	}
	return h.op.Process(b)
}

// sendAt pushes one row with an explicit origin.
func (h *harness) sendAt(part int32, off int64, r []types.Value) {
	h.t.Helper()
	b := types.NewBatch(1, len(r))
	b.Append(types.Row{Kind: types.Insert, Origin: types.Origin{Part: part, Offset: off}, Vals: r})
	if err := h.op.Process(b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) watermark(wm int64) {
	h.t.Helper()
	h.wm = wm
	if err := h.op.Watermark(wm); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) finish() {
	h.t.Helper()
	h.wm = exec.MaxWatermark
	if err := h.op.Finish(); err != nil {
		h.t.Fatal(err)
	}
	if err := h.op.Close(); err != nil {
		h.t.Fatal(err)
	}
	if !h.rec.finished || !h.rec.closed {
		h.t.Fatal("Finish or Close not forwarded")
	}
}

// take returns the events logged so far and forgets them.
func (h *harness) take() []string {
	ev := h.rec.events
	h.rec.events = nil
	return ev
}

func (h *harness) expect(want ...string) {
	h.t.Helper()
	got := h.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Fatalf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// call builds an aggregate call of a built-in function.
func call(t testing.TB, name string, args []int, argTypes ...types.Type) agg.Call {
	t.Helper()
	f, err := agg.NewRegistry().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := f.ResultType(argTypes)
	if err != nil {
		t.Fatal(err)
	}
	return agg.Call{Func: f, Args: args, ArgTypes: argTypes, Result: rt, Filter: -1}
}

// The Bid table of Flink's window docs: bidtime, price, item, supplier_id.
var bidPrice = types.Decimal(10, 2)

func bid(t testing.TB, at string, cents int64, item, supplier string) []types.Value {
	return []types.Value{
		types.TimestampValue(ts(t, at)),
		types.DecimalValue(cents, 2),
		types.StringValue(item),
		types.StringValue(supplier),
	}
}

// bids is the six-row Bid table of Flink's window docs.
func bids(t testing.TB) [][]types.Value {
	return [][]types.Value{
		bid(t, "2020-04-15 08:05", 400, "C", "supplier1"),
		bid(t, "2020-04-15 08:07", 200, "A", "supplier1"),
		bid(t, "2020-04-15 08:09", 500, "D", "supplier2"),
		bid(t, "2020-04-15 08:11", 300, "B", "supplier2"),
		bid(t, "2020-04-15 08:13", 100, "E", "supplier1"),
		bid(t, "2020-04-15 08:17", 600, "F", "supplier2"),
	}
}

// sessionBids is the five-row Bid table of Flink's SESSION examples.
func sessionBids(t testing.TB) [][]types.Value {
	return [][]types.Value{
		bid(t, "2020-04-15 08:07", 400, "A", ""),
		bid(t, "2020-04-15 08:06", 200, "A", ""),
		bid(t, "2020-04-15 08:09", 500, "B", ""),
		bid(t, "2020-04-15 08:08", 300, "A", ""),
		bid(t, "2020-04-15 08:17", 100, "B", ""),
	}
}

// feed sends rows one by one, each followed by the docs' watermark,
// bidtime - 1 s, then the end of input.
func (h *harness) feed(rows [][]types.Value) {
	h.t.Helper()
	high := exec.MinWatermark
	for _, r := range rows {
		h.send(r)
		high = max(high, r[0].Int()-sec)
		h.watermark(high)
	}
	h.watermark(exec.MaxWatermark)
}

// rowsOnly drops the watermark events.
func rowsOnly(ev []string) []string {
	var out []string
	for _, e := range ev {
		if !strings.HasPrefix(e, "WM ") {
			out = append(out, e)
		}
	}
	return out
}
