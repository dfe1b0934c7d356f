package kshuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// testSchema is (k STRING, n BIGINT, ts TIMESTAMP(3), price DECIMAL(10, 2)).
var testSchema = []types.Type{types.String, types.BigInt, types.Timestamp(3), types.Decimal(10, 2)}

// newCluster starts an in-process Kafka-protocol cluster for one test.
func newCluster(t testing.TB) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("cannot start kfake cluster: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openWriter builds and opens a writer.
func openWriter(t testing.TB, ctx context.Context, o Options) *Writer {
	t.Helper()
	w, err := NewWriter(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Open(&exec.Context{Ctx: ctx}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// testRow is row i written by writer w: its origin is (w, i+1).
func testRow(w, i int, keys int) types.Row {
	return types.Row{
		Kind:   types.Insert,
		Origin: types.Origin{Part: int32(w), Offset: int64(i + 1)},
		Vals: []types.Value{
			types.StringValue(fmt.Sprintf("key-%03d", (i*7+w)%keys)),
			types.BigIntValue(int64(w*1_000_000 + i)),
			types.TimestampValue(int64(i) * 1000),
			types.DecimalValue(int64(i%1000), 2),
		},
	}
}

func batchOf(rows ...types.Row) *types.Batch {
	b := types.NewBatch(len(rows), len(testSchema))
	for _, r := range rows {
		b.Append(r)
	}
	return b
}

// event is a watermark change a reader reported.
type event struct {
	wm   int64
	idle bool
}

func (e event) String() string {
	wm := fmt.Sprint(e.wm)
	switch e.wm {
	case exec.MaxWatermark:
		wm = "max"
	case exec.MinWatermark:
		wm = "min"
	}
	if e.idle {
		return wm + "/idle"
	}
	return wm
}

// drain reads r until io.EOF as a source task would: it polls the
// watermark after every Read. It returns the rows (copied) and the
// watermark changes, and for each change how many rows preceded it.
func drain(t testing.TB, ctx context.Context, r *Reader, max int) ([]types.Row, []event, []int) {
	t.Helper()
	var rows []types.Row
	var events []event
	var at []int
	b := types.NewBatch(max, len(testSchema))
	for {
		b.Reset()
		err := r.Read(ctx, b, max)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("Read: %v", err)
		}
		if len(b.Rows) > max {
			t.Fatalf("Read returned %d rows, max %d", len(b.Rows), max)
		}
		for _, row := range b.Rows {
			rows = append(rows, types.CopyRow(row))
		}
		if wm, idle, ok := r.Watermark(); ok {
			events = append(events, event{wm, idle})
			at = append(at, len(rows))
		}
		if errors.Is(err, io.EOF) {
			return rows, events, at
		}
	}
}

func sameRow(t testing.TB, got, want types.Row) {
	t.Helper()
	if got.Kind != want.Kind || got.Origin != want.Origin || len(got.Vals) != len(want.Vals) {
		t.Fatalf("got row %v %+v %v, want %v %+v %v", got.Kind, got.Origin, got.Vals, want.Kind, want.Origin, want.Vals)
	}
	for i := range got.Vals {
		g, w := got.Vals[i], want.Vals[i]
		if g.Kind() != w.Kind() || !types.Equal(g, w) || g.Kind() == types.KindDecimal && g.Scale() != w.Scale() {
			t.Fatalf("row %+v column %d: got %v, want %v", want.Origin, i, g, w)
		}
	}
}
