package window

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// benchAggregate runs a window aggregate of COUNT(*), SUM(price DECIMAL)
// and MAX(v BIGINT) grouped by a string key over batches of 1024 rows, one
// row every step µs of event time, a watermark after every batch, and
// reports rows/s.
func benchAggregate(b *testing.B, spec Spec, keys int, step int64) {
	benchAggregateCheckpointed(b, spec, keys, step, 0)
}

// benchAggregateCheckpointed is benchAggregate with a checkpoint into an
// in-memory store every cpEvery batches (never if 0).
func benchAggregateCheckpointed(b *testing.B, spec Spec, keys int, step int64, cpEvery int) {
	calls := []agg.Call{
		call(b, "COUNT", nil),
		call(b, "SUM", []int{1}, types.Decimal(10, 2)),
		call(b, "MAX", []int{2}, types.BigInt),
	}
	op, err := NewAggregate(AggregateConfig{ID: "bench", Spec: spec, TimeCol: 0, Keys: []int{3}, Calls: calls, Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := &exec.Context{Ctx: context.Background(), State: state.NewMemory(), Metrics: &exec.Metrics{}}
	if err := op.Open(ctx); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keyVals := make([]types.Value, keys)
	for i := range keyVals {
		keyVals[i] = types.StringValue(fmt.Sprintf("key-%05d", i))
	}
	const batchRows = 1024
	batch := types.NewBatch(batchRows, 4)
	for range batchRows {
		vals := batch.AddRow(types.Insert, types.Origin{}, 4)
		vals[1] = types.DecimalValue(rng.Int64N(100000), 2)
		vals[2] = types.BigIntValue(rng.Int64N(1000))
		vals[3] = keyVals[rng.IntN(keys)]
	}
	cp := op.(exec.Checkpointer)
	var t, off int64
	rows, batches := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for rows < b.N {
		for i := range batch.Rows {
			r := &batch.Rows[i]
			r.Vals[0] = types.TimestampValue(t)
			off++
			r.Origin.Offset = off
			t += step
		}
		if err := op.Process(batch); err != nil {
			b.Fatal(err)
		}
		if err := op.Watermark(t - sec); err != nil {
			b.Fatal(err)
		}
		rows += batchRows
		if batches++; cpEvery > 0 && batches%cpEvery == 0 {
			if err := cp.Checkpoint(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := op.Watermark(exec.MaxWatermark); err != nil {
		b.Fatal(err)
	}
	if err := op.Finish(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if err := op.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkTumbleAggregate(b *testing.B) {
	for _, bc := range []struct {
		keys int
		size int64
	}{
		{10000, mnt}, // ~600 rows per key and window at 100k rows/s
		{10000, sec}, // ~1 row per key and window: group churn
		{100, mnt},
	} {
		b.Run(fmt.Sprintf("keys=%d/size=%s", bc.keys, FormatDuration(bc.size)), func(b *testing.B) {
			benchAggregate(b, Spec{Kind: Tumble, Size: bc.size}, bc.keys, 10)
		})
	}
}

// BenchmarkTumbleAggregateCheckpointed checkpoints every 100 batches
// (about 1 s of input at 100k rows/s): the cost of dirty tracking and of
// writing the changed entries.
func BenchmarkTumbleAggregateCheckpointed(b *testing.B) {
	for _, bc := range []struct {
		keys int
		size int64
	}{
		{10000, mnt},
		{10000, sec},
	} {
		b.Run(fmt.Sprintf("keys=%d/size=%s", bc.keys, FormatDuration(bc.size)), func(b *testing.B) {
			benchAggregateCheckpointed(b, Spec{Kind: Tumble, Size: bc.size}, bc.keys, 10, 100)
		})
	}
}

func BenchmarkHopAggregate(b *testing.B) {
	for _, slide := range []int64{30 * sec, 10 * sec} {
		b.Run(fmt.Sprintf("keys=10000/size=1 min/slide=%s", FormatDuration(slide)), func(b *testing.B) {
			benchAggregate(b, Spec{Kind: Hop, Size: mnt, Slide: slide}, 10000, 10)
		})
	}
}

func BenchmarkCumulateAggregate(b *testing.B) {
	b.Run("keys=10000/size=1 min/step=10 s", func(b *testing.B) {
		benchAggregate(b, Spec{Kind: Cumulate, Size: mnt, Step: 10 * sec}, 10000, 10)
	})
}

func BenchmarkSessionAggregate(b *testing.B) {
	for _, gap := range []int64{50 * ms, 10 * sec} {
		b.Run(fmt.Sprintf("keys=10000/gap=%s", FormatDuration(gap)), func(b *testing.B) {
			benchAggregate(b, Spec{Kind: Session, Gap: gap}, 10000, 10)
		})
	}
}
