package suppress

import (
	"fmt"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// BenchmarkSuppress measures the suppression of alerts over keys key
// sets (one alert a second of event time, a 10-minute interval: most
// are suppressed), a batch of 256 a call; ns/op is per alert.
func BenchmarkSuppress(b *testing.B) {
	for _, keys := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			o, err := New(Config{ID: "s", Keys: []int{keyCol}, Interval: 10 * minute, TimeCol: timeCol, CountCol: countCol, Next: discard{}})
			if err != nil {
				b.Fatal(err)
			}
			if err := o.Open(&exec.Context{}); err != nil {
				b.Fatal(err)
			}
			names := make([]types.Value, keys)
			for i := range names {
				names[i] = types.StringValue(fmt.Sprintf("host-%06d", i))
			}
			batch := &types.Batch{}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += 256 {
				batch.Truncate()
				for i := range 256 {
					k := n + i
					vals := batch.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(k + 1)}, 3)
					vals[keyCol], vals[timeCol], vals[countCol] = names[k%keys], types.TimestampValue(int64(k)*1_000_000), types.IntValue(types.KindBigInt, 0)
				}
				if err := o.Process(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discard takes alerts and drops them.
type discard struct{}

func (discard) Open(*exec.Context) error   { return nil }
func (discard) Process(*types.Batch) error { return nil }
func (discard) Watermark(int64) error      { return nil }
func (discard) Finish() error              { return nil }
func (discard) Close() error               { return nil }
