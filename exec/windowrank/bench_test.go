package windowrank

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/rank"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// benchTopN runs TUMBLE(1 min) then a window Top-3 per key (k STRING, of
// keys keys) ordered by v BIGINT descending, over batches of 1024 rows,
// one row every 10 µs of event time (100k rows/s: 6M rows, ~600 per key,
// per window), v pseudo-random per row, a watermark after every batch, a
// checkpoint into an in-memory store every cpEvery batches (never if 0).
// It reports rows/s.
func benchTopN(b *testing.B, typ rank.Type, keys, cpEvery int) {
	// Input (t TIMESTAMP, v BIGINT, k STRING); the TVF appends the window.
	typs := []types.Type{types.Timestamp(3), types.BigInt, types.String, types.Timestamp(3), types.Timestamp(3), types.Timestamp(3)}
	op, err := New(Config{ID: "bench", Start: 3, End: 4, Partition: []int{2}, Type: typ, Limit: 3,
		Order: []rank.SortKey{{Col: 1, Desc: true}}, Types: typs, Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	const mnt = 60_000_000
	tvf, err := window.NewAssign(window.AssignConfig{Spec: window.Spec{Kind: window.Tumble, Size: mnt}, TimeCol: 0, Next: op})
	if err != nil {
		b.Fatal(err)
	}
	ctx := &exec.Context{State: state.NewMemory(), Metrics: &exec.Metrics{}}
	if err := tvf.Open(ctx); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keyVals := make([]types.Value, keys)
	for i := range keyVals {
		keyVals[i] = types.StringValue(fmt.Sprintf("key-%05d", i))
	}
	const batchRows = 1024
	batch := types.NewBatch(batchRows, 3)
	for range batchRows {
		vals := batch.AddRow(types.Insert, types.Origin{}, 3)
		vals[2] = keyVals[rng.IntN(keys)]
	}
	var t, off int64
	x := uint64(88172645463325252)
	rows, batches := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for rows < b.N {
		for i := range batch.Rows {
			r := &batch.Rows[i]
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			r.Vals[0] = types.TimestampValue(t)
			r.Vals[1] = types.BigIntValue(int64(x % 1_000_000))
			off++
			r.Origin.Offset = off
			t += 10
		}
		if err := tvf.Process(batch); err != nil {
			b.Fatal(err)
		}
		if err := tvf.Watermark(t - 1_000_000); err != nil {
			b.Fatal(err)
		}
		rows += batchRows
		if batches++; cpEvery > 0 && batches%cpEvery == 0 {
			if err := op.Checkpoint(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tvf.Watermark(exec.MaxWatermark); err != nil {
		b.Fatal(err)
	}
	if err := tvf.Finish(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if err := tvf.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWindowTop3: TUMBLE(1 min), then ROW_NUMBER (RANK, DENSE_RANK)
// <= 3 per key over 10,000 keys.
func BenchmarkWindowTop3(b *testing.B) {
	for _, typ := range []rank.Type{rank.RowNumber, rank.Standard, rank.Dense} {
		b.Run(fmt.Sprintf("%s/keys=10000", typ), func(b *testing.B) { benchTopN(b, typ, 10_000, 0) })
	}
	// A checkpoint every 100 batches (about 1 s of input at 100k rows/s).
	b.Run("ROW_NUMBER/keys=10000/checkpointed", func(b *testing.B) { benchTopN(b, rank.RowNumber, 10_000, 100) })
}
