package rank

import (
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// BenchmarkTop10: Top-10 per key over 10k keys, an append-only stream of
// rows with pseudo-random values, in batches of 1,024 rows.
func BenchmarkTop10(b *testing.B) {
	const keys = 10_000
	o, err := New(Config{Partition: []int{0}, Limit: 10, Types: cols,
		Order: []SortKey{{Col: 1, Desc: true}}, Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(1024, 3)
	s := types.StringValue("payload")
	x := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i += 1024 {
		batch.Reset()
		for j := i; j < min(i+1024, b.N); j++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v := batch.AddRow(types.Insert, types.Origin{Part: -1}, 3)
			v[0], v[1], v[2] = types.IntValue(types.KindInt, int64(j%keys)), types.IntValue(types.KindInt, int64(x%1_000_000)), s
		}
		if err := o.Process(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
